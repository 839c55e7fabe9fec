import type { OperationGroup, Route } from '#shared/routes/route.ts';

/** The operation groups `routes` use, in order of first appearance: one Lambda function each. */
export function operationGroupsOf(routes: readonly Route[]): OperationGroup[] {
  return [...new Set(routes.map((route) => route.group))];
}

/** A construct id for a group's function: `edge-routers` → `EdgeRoutersFunction`. */
export function functionIdOf(group: OperationGroup): string {
  const words = group.split(/[^A-Za-z0-9]+/).filter((word) => word !== '');
  return `${words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join('')}Function`;
}
