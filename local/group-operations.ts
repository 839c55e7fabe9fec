import { operations as authentication } from '#functions/authentication/handler.ts';
import { operations as client } from '#functions/client/handler.ts';
import { operations as database } from '#functions/database/handler.ts';
import { operations as fabric } from '#functions/fabric/handler.ts';
import { operations as identities } from '#functions/identities/handler.ts';
import { operations as info } from '#functions/info/handler.ts';
import { operations as pki } from '#functions/pki/handler.ts';
import { operations as policies } from '#functions/policies/handler.ts';
import { operations as poll } from '#functions/poll/handler.ts';
import { operations as postureChecks } from '#functions/posture-checks/handler.ts';
import { operations as routers } from '#functions/routers/handler.ts';
import { operations as services } from '#functions/services/handler.ts';
import { operations as sessions } from '#functions/sessions/handler.ts';
import type { OperationMap } from '#shared/http/operation.ts';
import type { OperationGroup } from '#shared/routes/route.ts';

/** Every operation group's operations: the local server builds the same group handlers the Lambdas export. */
export const GROUP_OPERATIONS: Readonly<Record<OperationGroup, OperationMap>> = {
  info,
  authentication,
  identities,
  services,
  routers,
  'posture-checks': postureChecks,
  policies,
  client,
  poll,
  sessions,
  pki,
  database,
  fabric,
};
