import { type Service, services } from '#shared/entities/service.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { RecentMap } from '#shared/recent-map.ts';

/** What the control plane reads of a service outside a dial: how it picks terminators, how long a circuit may idle. */
export interface ServiceSettings {
  readonly terminatorStrategy: string;
  /** 0: no limit. */
  readonly maxIdleTimeMillis: number;
}

/**
 * Services' settings as this endpoint last read them, for what is not a dial (a router's idle circuits, once a minute
 * per router): each dial reads its service anyway and refreshes its entry for free; anything older than
 * `SETTINGS_TTL_MS` is read again. A changed `maxIdleTimeMillis` therefore applies within half a minute, well inside
 * the minute between a router's confirmations.
 */
export interface ServiceSettingsCache {
  /** A service a dial just read. */
  noted(service: Service): void;
  /** The settings of each service by id; undefined for one that no longer exists. */
  of(serviceIds: readonly string[]): Promise<ReadonlyMap<string, ServiceSettings | undefined>>;
}

export const SETTINGS_TTL_MS = 30_000;
const MAX_SERVICES = 10_000;

export function createServiceSettings(deps: Pick<Deps, 'store' | 'now'>): ServiceSettingsCache {
  const cached = new RecentMap<string, { readonly settings: ServiceSettings | undefined; readonly readAtMs: number }>(
    MAX_SERVICES,
  );
  const note = (serviceId: string, settings: ServiceSettings | undefined) =>
    cached.set(serviceId, { settings, readAtMs: deps.now().getTime() });
  return {
    noted(service) {
      note(service.id, settingsOf(service));
    },
    async of(serviceIds) {
      const nowMs = deps.now().getTime();
      const ids = [...new Set(serviceIds)];
      const stale = ids.filter((id) => {
        const entry = cached.get(id);
        return !entry || nowMs - entry.readAtMs >= SETTINGS_TTL_MS;
      });
      if (stale.length > 0) {
        const read = new Map((await deps.store.getMany(services, stale)).map((service) => [service.id, service]));
        for (const id of stale) {
          const service = read.get(id);
          note(id, service && settingsOf(service));
        }
      }
      return new Map(ids.map((id) => [id, cached.get(id)?.settings]));
    },
  };
}

const settingsOf = (service: Service): ServiceSettings => ({
  terminatorStrategy: service.terminatorStrategy,
  maxIdleTimeMillis: service.maxIdleTimeMillis,
});
