import type { Route } from '../route.ts';
import { BOTH, route } from '../route-builder.ts';

/** Version and capabilities, on both APIs. */
export const INFO_ROUTES: readonly Route[] = [
  // Version and capabilities.
  route('GET', '/', BOTH, 'info', 'none', 'listRoot'),
  route('GET', '/version', BOTH, 'info', 'none', 'listVersion'),
  route('GET', '/enumerated-capabilities', BOTH, 'info', 'none', 'listEnumeratedCapabilities'),
];
