import { type IntegrityFinding, MAX_FINDINGS } from './integrity-types.ts';

/** The findings of one segment: the first `MAX_FINDINGS` kept, the rest only counted. */
export class Findings {
  readonly list: IntegrityFinding[] = [];
  truncated = false;

  add(description: string, fixed: boolean): void {
    if (this.list.length >= MAX_FINDINGS) {
      this.truncated = true;
      return;
    }
    this.list.push({ description, fixed });
  }
}
