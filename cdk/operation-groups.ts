import type { OperationGroup, Route } from '#shared/routes/route.ts';

/** The operation groups `routes` use, in order of first appearance: one Lambda function each. */
export function operationGroupsOf(routes: readonly Route[]): OperationGroup[] {
  return [...new Set(routes.map((route) => route.group))];
}

/**
 * The source of every function the stack deploys: one per operation group of the route table, the bootstrap and the
 * integrity scan's (what the construct package ships built, and what the bundle budget and the bench measure).
 */
export function functionSources(routes: readonly Route[]): string[] {
  return [...operationGroupsOf(routes), 'bootstrap', 'integrity'];
}

/** A construct id for a group's function: `edge-routers` → `EdgeRoutersFunction`. */
export function functionIdOf(group: OperationGroup): string {
  const words = group.split(/[^A-Za-z0-9]+/).filter((word) => word !== '');
  return `${words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join('')}Function`;
}
