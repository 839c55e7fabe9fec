import { type SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import type { StateMachine } from '../ports/state-machine.ts';

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
