/** A start that cannot go on, for a reason the person starting it can fix: its message alone is shown, on one line. */
export class StartRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartRefused';
  }
}
