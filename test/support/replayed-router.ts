import type { ChannelMessage } from '#ctrl-channel/message.ts';
import type { RouterEnd } from './ctrl-router.ts';

/**
 * A router enrolled by a replay test, standing for a recorded one: it sends the recording's frames under sequences of
 * its own, and reads what the controller sent it by type, keeping the rest for a later read (the controller's
 * messages to several routers interleave in no fixed order).
 */
export class ReplayedRouter {
  private readonly kept: ChannelMessage[] = [];
  private sequence = 100;
  readonly id: string;
  readonly end: RouterEnd;
  constructor(id: string, end: RouterEnd) {
    this.id = id;
    this.end = end;
  }

  send(message: Omit<ChannelMessage, 'sequence'>): number {
    const sequence = this.sequence++;
    this.end.send({ ...message, sequence });
    return sequence;
  }

  async next(contentType: number, timeoutMs = 10_000): Promise<ChannelMessage> {
    const index = this.kept.findIndex((message) => message.contentType === contentType);
    if (index >= 0) return this.kept.splice(index, 1)[0]!;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const message = await this.end.next(Math.max(1, deadline - Date.now()));
      if (message.contentType === contentType) return message;
      this.kept.push(message);
    }
  }

  /** No message of this type within the time: what the controller did not send. */
  async none(contentType: number, timeoutMs: number): Promise<boolean> {
    return this.next(contentType, timeoutMs).then(
      () => false,
      () => true,
    );
  }
}
