import { afterAll, beforeAll } from 'vitest';
import type { ChannelTimings } from '#ctrl-channel/channel.ts';
import type { ControlFeatureFactory } from '#ctrl-channel/control-plane.ts';
import type { ControllerConfig } from '#shared/config.ts';
import type { IntegrityCore } from '#shared/integrity/integrity-run.ts';
import { startTestController, type TestController } from './test-controller.ts';

/** What a test file may ask of its controller besides configuration: see `startTestController`. */
export interface ControllerSetup {
  /** The integrity run's steps (a test gates or fails segments). */
  readonly integrityCore?: IntegrityCore;
  /** `aws` adds the mTLS listener and the SDKs' front door. */
  readonly shape?: 'one-listener' | 'aws';
  /** The control channel's heartbeat and reply timings (short ones for tests of a silent router). */
  readonly ctrlTimings?: ChannelTimings;
  /** The control plane's features (all of them by default; a test swaps one for its variant with short timings). */
  readonly ctrlFeatures?: readonly ControlFeatureFactory[];
  /** How often the endpoint reads every router's connection again (10 s by default; shorter for tests of a lapse). */
  readonly ctrlPresenceRefreshMs?: number;
  /** The terminator strategies' random draws (a seeded source, so a test of chance gives the same draws every run). */
  readonly ctrlRandom?: () => number;
  /** Whether the endpoint relays to others' routers (`endpoint-relay.ts`), listening on 127.0.0.1. */
  readonly ctrlRelay?: boolean;
}

/**
 * One controller for the whole test file, started in `beforeAll` and closed in `afterAll`, with nobody logged in (for
 * files about anonymous routes and logins themselves). The answer is a getter: the controller exists only once setup
 * has run. `afterStart` runs inside the same `beforeAll`, right after the start (the admin's login).
 */
export function useTestController(
  overrides: Partial<ControllerConfig> = {},
  setup: ControllerSetup = {},
  afterStart: (controller: TestController) => Promise<void> = async () => {},
): () => TestController {
  let started: TestController | undefined;

  beforeAll(async () => {
    started = await startTestController(
      overrides,
      setup.integrityCore,
      setup.shape,
      setup.ctrlTimings,
      setup.ctrlFeatures,
      setup.ctrlPresenceRefreshMs,
      setup.ctrlRandom,
      setup.ctrlRelay,
    );
    await afterStart(started);
  });
  afterAll(async () => {
    await started?.close();
  });

  return () => {
    if (!started) throw new Error('the test controller is used before beforeAll started it');
    return started;
  };
}
