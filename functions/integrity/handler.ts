import { defaultDeps } from '#functions/create-deps.ts';
import { taskHandler } from '#shared/http/task-handler.ts';
import { integrityTask } from '#shared/integrity/integrity-run.ts';

/** The integrity state machine's Task function (not behind API Gateway): scan a segment, finish, or record a failure. */
export const handler = taskHandler(defaultDeps, (event: unknown) => integrityTask(defaultDeps(), event));
