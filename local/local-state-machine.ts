import { StateMachine as LocalRunner } from 'aws-local-stepfunctions';
import { INTEGRITY_CORE, type IntegrityCore, integrityTask } from '#shared/integrity/integrity-run.ts';
import {
  FAILURE_STATE,
  FINISH_STATE,
  integrityStateMachineDefinition,
  SCAN_STATE,
} from '#shared/integrity/state-machine-definition.ts';
import type { Deps } from '#shared/ports/deps.ts';
import type { StateMachine } from '#shared/ports/state-machine.ts';

/** The ARN the local definition names; every Task is overridden with the in-process handler, so nothing is called. */
const LOCAL_FUNCTION_ARN = 'arn:aws:lambda:us-east-1:000000000000:function:ziti-controller-integrity';

/**
 * The integrity state machine run in this process by aws-local-stepfunctions: the definition CDK deploys, each Task
 * answered by the integrity function's own handler, in the background of the request that started it.
 */
export function localStateMachine(deps: () => Deps, core: IntegrityCore = INTEGRITY_CORE): StateMachine {
  const runner = new LocalRunner(integrityStateMachineDefinition(LOCAL_FUNCTION_ARN) as never);
  const task = (input: unknown) => integrityTask(deps(), input, core);
  return {
    async start(input) {
      const execution = runner.run(input as never, {
        overrides: {
          taskResourceLocalHandlers: { [SCAN_STATE]: task, [FINISH_STATE]: task, [FAILURE_STATE]: task },
        } as never,
      });
      execution.result.catch((error: unknown) => {
        deps().logger.warn('local integrity run ended in failure', { runId: input.runId, reason: String(error) });
      });
    },
  };
}
