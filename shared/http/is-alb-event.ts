import type { ALBEvent } from 'aws-lambda';

/**
 * Whether a Lambda event came from an Application Load Balancer's target group (`requestContext.elb`). What handles
 * such an event (`alb-event.ts`) is loaded with the first one, so that a function behind API Gateway never loads it.
 */
export function isAlbEvent(event: unknown): event is ALBEvent {
  const context = (event as { requestContext?: { elb?: unknown } } | null)?.requestContext;
  return typeof context?.elb === 'object' && context.elb !== null;
}

/** The load balancer's events, loaded on first use. */
export const albEventModule = () => import('./alb-event.ts');
