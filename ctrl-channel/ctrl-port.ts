/**
 * The port the routers' endpoint listens on inside its ECS task (`CTRL_PORT`): the reference's former control channel
 * port. Routers dial the load balancer's port (docs/aws.md, "The routers' endpoint"), which forwards here.
 */
export const DEFAULT_CTRL_PORT = 6262;

/**
 * The port each task's relay listens on (`CTRL_RELAY_PORT`): where the other tasks send messages for the routers it
 * holds (`endpoint-relay.ts`). Reached from the tasks' own security group only, never through the load balancer.
 */
export const DEFAULT_CTRL_RELAY_PORT = 6263;
