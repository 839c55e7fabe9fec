import type { Route } from '../route.ts';

/** Config types, configs, services and terminators. */
export const SERVICES_ROUTES: readonly Route[] = [];
