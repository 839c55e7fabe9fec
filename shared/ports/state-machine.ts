/** What an execution starts with. */
export interface IntegrityRunInput {
  readonly runId: string;
  readonly mode: 'check' | 'fix';
  readonly totalSegments: number;
  /** `0 … totalSegments - 1`: what the Map iterates over. */
  readonly segments: readonly number[];
}

/** Starts integrity runs: Step Functions in AWS, an in-process runner of the same definition locally. */
export interface StateMachine {
  start(input: IntegrityRunInput): Promise<void>;
}

/** Where no state machine is configured (a function the stack gives none): starting a run fails loudly. */
export const NO_STATE_MACHINE: StateMachine = {
  async start() {
    throw new Error('no integrity state machine is configured for this function');
  },
};
