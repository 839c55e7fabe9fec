import type { Logger } from '../log/logger.ts';
import type { Store } from './entity-store.ts';

/** What the store's helpers need of the controller's dependencies: the store and a logger (`Deps` is one). */
export interface StoreContext {
  readonly store: Store;
  readonly logger: Logger;
}
