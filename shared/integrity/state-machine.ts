import { type SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import type { IntegrityRunInput } from './state-machine-definition.ts';

/** Starts integrity runs: Step Functions in AWS, an in-process runner of the same definition locally. */
export interface StateMachine {
  start(input: IntegrityRunInput): Promise<void>;
}

/** Step Functions: one execution per run, named by the run's id (so a retried start cannot run it twice). */
export function stepFunctionsStateMachine(client: SFNClient, stateMachineArn: string): StateMachine {
  return {
    async start(input) {
      await client.send(
        new StartExecutionCommand({ stateMachineArn, name: input.runId, input: JSON.stringify(input) }),
      );
    },
  };
}

/** Where no state machine is configured (a function the stack gives none): starting a run fails loudly. */
export const NO_STATE_MACHINE: StateMachine = {
  async start() {
    throw new Error('no integrity state machine is configured for this function');
  },
};
