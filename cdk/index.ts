/**
 * The controller as a CDK construct library (the package `npm run package` builds): {@link ZitiController} to put in
 * a stack of your own, or {@link ControllerStack}, the stack this repository's app deploys.
 */
export type { BuildStamp } from './build-stamp.ts';
export { LIVE_ALIAS } from './controller-function.ts';
export { ALARM_THRESHOLDS } from './controller-monitoring.ts';
export {
  type ApiLimits,
  type ControllerSettings,
  DEFAULT_API_LIMITS,
  DEFAULT_ENVIRONMENT,
  type DomainSettings,
} from './controller-settings.ts';
export { ControllerStack, type ControllerStackProps } from './controller-stack.ts';
export type { FrontDoor, FrontDoorSettings } from './front-door.ts';
export { DEFAULT_PROVISIONED_CAPACITY, type TableBillingMode, type TableCapacitySettings } from './table-capacity.ts';
export { TAG_KEYS, ZitiController, type ZitiControllerProps } from './ziti-controller.ts';
