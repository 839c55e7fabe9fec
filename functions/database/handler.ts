import { defaultDeps } from '#functions/create-deps.ts';
import { createGroupHandler } from '#shared/http/create-group-handler.ts';
import { empty, ok } from '#shared/http/envelope.ts';
import type { Operation, OperationMap } from '#shared/http/operation.ts';
import { newId } from '#shared/ids.ts';
import { failIntegrityRun, readIntegrityStatus, takeIntegrityLock } from '#shared/integrity/integrity-run.ts';
import type { IntegrityMode } from '#shared/integrity/integrity-types.ts';
import { stepFunctionsStateMachine } from '#shared/integrity/state-machine.ts';
import { madeOnFirstCall } from '#shared/ports/aws-client.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { DATABASE_ROUTES } from '#shared/routes/groups/database-routes.ts';
import { createSnapshot } from './snapshot.ts';

/**
 * Starts a run: the lock first (so a second request is refused at once), then the state machine. A start that fails
 * frees the lock with the reason in the results.
 */
function startRun(mode: IntegrityMode): Operation {
  return async (request, deps) => {
    const runId = newId();
    await takeIntegrityLock(deps, runId, mode);
    const totalSegments = deps.config.integritySegments;
    try {
      await deps.stateMachine.start({
        runId,
        mode,
        totalSegments,
        segments: Array.from({ length: totalSegments }, (_, segment) => segment),
      });
    } catch (error) {
      await failIntegrityRun(deps, runId, 'the integrity run could not start');
      throw error;
    }
    request.logger.info('integrity run started', { runId, mode, totalSegments });
    return { statusCode: 202, body: empty().body };
  };
}

export const operations: OperationMap = {
  checkDataIntegrity: startRun('check'),
  fixDataIntegrity: startRun('fix'),
  dataIntegrityResults: async (_request, deps) => {
    const status = await readIntegrityStatus(deps);
    const result = ok(status);
    const body = result.body as { meta: Record<string, unknown> };
    body.meta.pagination = { limit: -1, offset: 0, totalCount: status.results.length };
    body.meta.filterableFields = [];
    return result;
  },
  createDatabaseSnapshot: async (request, deps) => {
    const snapshot = await createSnapshot(deps);
    request.logger.info('database snapshot created', { snapshot });
    return empty();
  },
};

let cached: Deps | undefined;

/** The group's deps: the shared ones, with the stack's state machine to start runs on. */
function databaseDeps(): Deps {
  if (!cached) {
    const deps = defaultDeps();
    const arn = deps.config.integrityStateMachineArn;
    cached = arn
      ? {
          ...deps,
          stateMachine: stepFunctionsStateMachine(
            madeOnFirstCall(
              async () => new (await import('@aws-sdk/client-sfn')).SFNClient({ region: deps.config.region }),
            ),
            arn,
          ),
        }
      : deps;
  }
  return cached;
}

/** The routes this function serves: its part of the route table (`shared/routes/route-table.ts`). */
export const routes = DATABASE_ROUTES;

export const handler = createGroupHandler('database', routes, operations, databaseDeps);
