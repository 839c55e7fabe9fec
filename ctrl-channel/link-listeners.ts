import { type ChannelMessage, Header } from './message.ts';
import { encodedElementsOf, MalformedBody } from './protobuf-codec.ts';

/**
 * The most link listeners kept of a router's hello: the reference router has one per `link.listeners` entry of its
 * configuration, a few at most.
 */
export const MAX_LINK_LISTENERS = 16;

/** What a router's hello says of where its peers dial it, and what was wrong with it. */
export interface HelloLinkListeners {
  /** Each `ctrl.Listener` as the router encoded it: passed on to its peers byte for byte. */
  readonly listeners: readonly Buffer[];
  /** Why some or all were left out (a malformed header, too many), for a warning. */
  readonly problem?: string;
}

/**
 * A router's link listeners, from its hello's header 1000 (a `ctrl.Listeners`): absent when it listens for no links.
 * Its peers dial only listeners whose groups meet their dialers' and pick their kind of link by what it says, so each
 * is kept whole, as the router wrote it, never rebuilt from the fields this controller knows (a field lost would stop
 * the dial). Bounded: the first {@link MAX_LINK_LISTENERS}; a header that does not read gives none.
 */
export function linkListenersOf(hello: ChannelMessage): HelloLinkListeners {
  const header = hello.headers.get(Header.listeners);
  if (!header?.length) return { listeners: [] };
  try {
    const { elements, count } = encodedElementsOf('ctrl.Listeners', 'listeners', header, MAX_LINK_LISTENERS);
    const listeners = elements.map((element) => Buffer.from(element));
    return count > MAX_LINK_LISTENERS
      ? { listeners, problem: `${count} link listeners, the first ${MAX_LINK_LISTENERS} kept` }
      : { listeners };
  } catch (error) {
    if (!(error instanceof MalformedBody)) throw error;
    return { listeners: [], problem: `the link listeners header does not read: ${error.message}` };
  }
}
