import type { LookupAddress } from 'node:dns';
import { request as httpsRequest } from 'node:https';
import { rootCertificates } from 'node:tls';
import type { JSONWebKeySet } from 'jose';
import type { JwksConfig } from '../config.ts';
import { RecentMap } from '../recent-map.ts';
import { permittedAddresses, pinnedLookup, type Resolve, resolveAll } from './endpoint-addresses.ts';
import { jwksEndpointProblem } from './jwks-endpoint.ts';
import { JwksError } from './jwks-error.ts';

const tooSlow = (config: JwksConfig) => `JWKS fetch took over ${config.timeoutMs} ms`;

/** Rejects with a JwksError when `work` has not settled within `ms`. */
function withinMs<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new JwksError(message)), ms);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

/**
 * Fetches one JWKS document over HTTPS: only from an endpoint `jwks-endpoint.ts` accepts (again here, for signers
 * saved before it refused credentials) and only from addresses the address policy allows (every address the host
 * resolves to is checked, then the connection goes to a checked one), bounded in time (resolution included) and size,
 * JSON with a `keys` array or refused. Redirects are not followed: any answer but 200 is a refusal, so no redirect can
 * lead past the address check.
 */
export async function fetchJwks(
  endpoint: string,
  config: JwksConfig,
  resolve: Resolve = resolveAll,
): Promise<JSONWebKeySet> {
  const problem = jwksEndpointProblem(endpoint);
  if (problem) throw new JwksError(`JWKS endpoint ${problem}`);
  const url = new URL(endpoint);
  const startedAt = Date.now();
  const checking = permittedAddresses(url, config.allowPrivateAddresses, resolve);
  const addresses = await withinMs(checking, config.timeoutMs, tooSlow(config));
  return download(url, addresses, config, Math.max(1, config.timeoutMs - (Date.now() - startedAt)));
}

/** The GET itself, connecting only to `addresses`, within `remainingMs`. */
function download(
  url: URL,
  addresses: readonly LookupAddress[],
  config: JwksConfig,
  remainingMs: number,
): Promise<JSONWebKeySet> {
  return new Promise((resolve, reject) => {
    const request = httpsRequest(
      url,
      {
        method: 'GET',
        headers: { accept: 'application/json' },
        timeout: remainingMs,
        lookup: pinnedLookup(addresses),
        // A pooled socket would skip this fetch's connection to the addresses just checked; fetches are rare anyway.
        agent: false,
        // Node's `ca` replaces its public roots: keep them, so signers on public identity providers still verify.
        ...(config.trustedCaPem ? { ca: [...rootCertificates, config.trustedCaPem] } : {}),
      },
      (response) => {
        if (response.statusCode !== 200) {
          response.resume();
          reject(new JwksError(`JWKS endpoint answered ${response.statusCode}`));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > config.maxBytes) {
            request.destroy(new JwksError(`JWKS document larger than ${config.maxBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        response.on('end', () => {
          try {
            const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
            const keys = (parsed as { keys?: unknown }).keys;
            if (!Array.isArray(keys) || keys.some((key) => typeof key !== 'object' || key === null)) {
              throw new JwksError('JWKS document has no keys array');
            }
            resolve(parsed as JSONWebKeySet);
          } catch (error) {
            reject(error instanceof JwksError ? error : new JwksError('JWKS document is not JSON'));
          }
        });
        response.on('error', reject);
      },
    );
    // The whole exchange, not only each socket read, must end within the timeout.
    const deadline = setTimeout(() => request.destroy(new JwksError(tooSlow(config))), remainingMs);
    request.on('timeout', () => request.destroy(new JwksError(tooSlow(config))));
    request.on('error', (error) => reject(error instanceof JwksError ? error : new JwksError(error.message)));
    request.on('close', () => clearTimeout(deadline));
    request.end();
  });
}

interface CachedSet {
  /** The last key set fetched, and when: it is trusted for `cacheSeconds` from then, never longer. */
  readonly jwks: JSONWebKeySet | undefined;
  readonly fetchedAtMs: number;
  /** The last fetch, successful or not: the refetch cooldown counts from here. */
  readonly attemptedAtMs: number;
}

/** Endpoints remembered per instance; a handful of signers in practice, bounded anyway. */
const MAX_ENDPOINTS = 64;
const cache = new RecentMap<string, CachedSet>(MAX_ENDPOINTS);
const inFlight = new Map<string, Promise<JSONWebKeySet>>();

function remember(endpoint: string, entry: CachedSet): void {
  cache.set(endpoint, entry);
}

/**
 * The key set of an endpoint holding `kid`, from this instance's cache when it is fresh and knows the kid. An unknown
 * kid (the provider rotated its keys) fetches again, at most once per cooldown per endpoint; concurrent logins share
 * one fetch. Undefined when no key set can be had (the reason is thrown as a JwksError for the log).
 */
export async function keySetFor(
  endpoint: string,
  kid: string | undefined,
  config: JwksConfig,
  nowMs: number,
): Promise<JSONWebKeySet> {
  const cached = cache.get(endpoint);
  const fresh = cached?.jwks !== undefined && nowMs - cached.fetchedAtMs < config.cacheSeconds * 1000;
  const knowsKid = cached?.jwks?.keys.some((key) => kid === undefined || key.kid === kid) ?? false;
  if (cached && fresh && knowsKid) return cached.jwks!;
  if (cached && nowMs - cached.attemptedAtMs < config.refetchCooldownSeconds * 1000) {
    if (fresh) return cached.jwks!;
    throw new JwksError('JWKS endpoint failed recently; not fetched again yet');
  }
  let pending = inFlight.get(endpoint);
  if (!pending) {
    pending = fetchJwks(endpoint, config)
      .then(
        (jwks) => {
          remember(endpoint, { jwks, fetchedAtMs: nowMs, attemptedAtMs: nowMs });
          return jwks;
        },
        (error: unknown) => {
          // A failure is remembered too, so a dead endpoint is not hammered. The last good set keeps its own fetch
          // time: a failing endpoint must not extend the life of keys its provider may have withdrawn.
          remember(endpoint, {
            jwks: cached?.jwks,
            fetchedAtMs: cached?.fetchedAtMs ?? Number.NEGATIVE_INFINITY,
            attemptedAtMs: nowMs,
          });
          throw error;
        },
      )
      .finally(() => inFlight.delete(endpoint));
    inFlight.set(endpoint, pending);
  }
  return pending;
}
