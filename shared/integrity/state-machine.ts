import type { SFNClient } from '@aws-sdk/client-sfn';
import { type ClientSource, clientOf } from '../ports/aws-client.ts';
import type { StateMachine } from '../ports/state-machine.ts';

/** Step Functions: one execution per run, named by the run's id (so a retried start cannot run it twice). */
export function stepFunctionsStateMachine(source: ClientSource<SFNClient>, stateMachineArn: string): StateMachine {
  return {
    async start(input) {
      const [client, { StartExecutionCommand }] = await Promise.all([clientOf(source), import('@aws-sdk/client-sfn')]);
      await client.send(
        new StartExecutionCommand({ stateMachineArn, name: input.runId, input: JSON.stringify(input) }),
      );
    },
  };
}
