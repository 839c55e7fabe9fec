import type { Route } from '../route.ts';
import { MANAGEMENT, route } from '../route-builder.ts';

/** Database maintenance (admins): the integrity check and fix, their results, and snapshots. */
export const DATABASE_ROUTES: readonly Route[] = [
  route('POST', '/database/check-data-integrity', MANAGEMENT, 'database', 'admin', 'checkDataIntegrity'),
  route('POST', '/database/fix-data-integrity', MANAGEMENT, 'database', 'admin', 'fixDataIntegrity'),
  route('GET', '/database/data-integrity-results', MANAGEMENT, 'database', 'admin', 'dataIntegrityResults'),
  route('POST', '/database/snapshot', MANAGEMENT, 'database', 'admin', 'createDatabaseSnapshot'),
];
