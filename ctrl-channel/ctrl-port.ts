/**
 * The port the routers' endpoint listens on inside its ECS task (`CTRL_PORT`): the reference's former control channel
 * port. Routers dial the load balancer's port (docs/aws.md, "The routers' endpoint"), which forwards here.
 */
export const DEFAULT_CTRL_PORT = 6262;
