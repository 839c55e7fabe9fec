import { traced } from '../log/tracing.ts';
import { onceUntilRejected } from '../once-until-rejected.ts';

/**
 * An AWS SDK client, or how to make it on first use. The runtime's SDK modules cost tens of milliseconds each to
 * import, so a client a function may never call (KMS in a function that signs nothing this time, Step Functions in one
 * that starts no run) is imported with its first call rather than at the function's cold start.
 */
export type ClientSource<Client> = Client | (() => Promise<Client>);

/** The client of a source (made once by a lazy source). */
export function clientOf<Client extends object>(source: ClientSource<Client>): Promise<Client> {
  return typeof source === 'function' ? (source as () => Promise<Client>)() : Promise.resolve(source);
}

/** A source that imports the client's module and makes the (traced) client on first use, once. */
export function madeOnFirstCall<Client>(make: () => Promise<Client>): () => Promise<Client> {
  return onceUntilRejected(() => make().then(traced));
}
