/**
 * One issuer's key set, followed and never fetched per request (issue 49). The rules:
 * - fetched at start, in the background: readiness does not wait; until the first set arrives a
 *   token of this issuer is refused with 503 and Retry-After (KeysUnavailable), never verified
 *   against nothing and never 401;
 * - refreshed in the background every `refreshSeconds`, and at once when a token names a `kid`
 *   the set does not hold (OIDC Core §10.1.1);
 * - one fetch in flight at a time, and `cooldownSeconds` between the starts of two (a success or
 *   a failure alike), so a flood of made-up `kid`s costs one fetch per cooldown;
 * - when the provider does not answer, the last good set is used for `maxStaleSeconds` after it was
 *   fetched, then refused with 503 until a fetch succeeds again (fail closed);
 * - `jwksUri`, or found once by discovery (`<issuer>/.well-known/openid-configuration`, whose
 *   `issuer` must be the configured one).
 * Key selection is jose's local key set: `kty` (and `crv`) from the token's `alg`, then its `kid`;
 * `use`/`key_ops` honoured only when present; a key set member that is not a public key is refused.
 * jose's own remote set is not used: it fetches on the request path when its set is old, and
 * its cooldown counts only from a success, so a provider that is down is asked on every request.
 */
import { createLocalJWKSet, errors, type JWSHeaderParameters, type FlattenedJWSInput } from 'jose';
import type { CompiledIssuer } from './types.js';

export type FetchResult = 'ok' | 'error' | 'invalid';

/** A token of this issuer cannot be checked now: 503 with Retry-After. */
export class KeysUnavailable extends Error {
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number) {
    super('keys unavailable');
    this.name = 'KeysUnavailable';
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

type LocalSet = ReturnType<typeof createLocalJWKSet>;
export type KeySelector = (header: JWSHeaderParameters, token: FlattenedJWSInput) => ReturnType<LocalSet>;

export type IssuerKeys = Readonly<{
  /** jose's key function: the key for a token's header, or throws (KeysUnavailable, a jose error). */
  keyFor: KeySelector;
  /** How many keys are held now. */
  held(): number;
  /** Starts the first fetch and the background refresh. */
  start(): void;
  close(): void;
}>;

export type IssuerKeysDeps = Readonly<{
  now: () => number;
  onFetch: (result: FetchResult) => void;
  onKeys: (count: number) => void;
}>;

/** A key set's document is small; anything this large is not one. */
const MAX_DOCUMENT_BYTES = 512 * 1024;

export function createIssuerKeys(issuer: CompiledIssuer, deps: IssuerKeysDeps): IssuerKeys {
  const { now } = deps;
  const refreshMs = issuer.keys.refreshSeconds * 1000;
  const cooldownMs = issuer.keys.cooldownSeconds * 1000;
  const maxStaleMs = issuer.keys.maxStaleSeconds * 1000;
  const timeoutMs = issuer.keys.timeoutSeconds * 1000;
  let jwksUri = issuer.jwksUri;
  let local: LocalSet | undefined;
  let count = 0;
  let fetchedAt = -Infinity;
  let attemptedAt = -Infinity;
  let inFlight: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  /** A fetch now, unless one is in flight (its promise, then) or the cooldown has not passed. */
  function refresh(): Promise<void> {
    if (inFlight !== undefined) return inFlight;
    if (closed || now() - attemptedAt < cooldownMs) return Promise.resolve();
    attemptedAt = now();
    inFlight = fetchSet()
      .then(
        (set) => {
          local = set.local;
          count = set.count;
          fetchedAt = now();
          deps.onKeys(count);
          deps.onFetch('ok');
        },
        (error: unknown) => deps.onFetch(error instanceof InvalidDocument ? 'invalid' : 'error'),
      )
      .finally(() => {
        inFlight = undefined;
        schedule();
      });
    return inFlight;
  }

  /** The next background fetch: after the refresh period, or after the cooldown while the set is missing or old. */
  function schedule(): void {
    if (closed) return;
    clearTimeout(timer);
    const wanting = local === undefined || now() - fetchedAt >= refreshMs;
    timer = setTimeout(() => void refresh(), wanting ? cooldownMs : refreshMs - (now() - fetchedAt));
    timer.unref();
  }

  async function fetchSet(): Promise<{ local: LocalSet; count: number }> {
    jwksUri ??= await discover();
    const document = await getJson(jwksUri);
    try {
      const keys = (document as { keys?: unknown }).keys;
      return { local: createLocalJWKSet(document as Parameters<typeof createLocalJWKSet>[0]), count: Array.isArray(keys) ? keys.length : 0 };
    } catch {
      throw new InvalidDocument();
    }
  }

  async function discover(): Promise<string> {
    const document = (await getJson(`${issuer.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`)) as { issuer?: unknown; jwks_uri?: unknown };
    // A discovery document for another issuer is not this one's (OIDC Discovery §4.3).
    if (document.issuer !== issuer.issuer || typeof document.jwks_uri !== 'string') throw new InvalidDocument();
    return document.jwks_uri;
  }

  async function getJson(url: string): Promise<unknown> {
    // no-cache: a cache between us and the provider must not answer an unknown-kid refetch with the old set.
    const response = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json, application/jwk-set+json', 'cache-control': 'no-cache' } });
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new Error(`status ${response.status}`);
    }
    const text = await response.text();
    if (text.length > MAX_DOCUMENT_BYTES) throw new InvalidDocument();
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new InvalidDocument();
    }
  }

  /** The set to check with now, or why there is none (503). */
  function usable(): LocalSet {
    const age = now() - fetchedAt;
    if (local === undefined || age > maxStaleMs) {
      void refresh();
      throw new KeysUnavailable(Math.max(1, Math.ceil((attemptedAt + cooldownMs - now()) / 1000)));
    }
    if (age >= refreshMs) void refresh(); // the timer's job, unless the process slept: never waited on
    return local;
  }

  return {
    async keyFor(header, token) {
      try {
        return await usable()(header, token);
      } catch (error) {
        // OIDC Core §10.1.1: an unknown kid may be a new key: fetch now (within the cooldown's bound) and look once more.
        if (!(error instanceof errors.JWKSNoMatchingKey) || now() - attemptedAt < cooldownMs) throw error;
        await refresh();
        return usable()(header, token);
      }
    },
    held: () => count,
    start() {
      void refresh();
    },
    close() {
      closed = true;
      clearTimeout(timer);
    },
  };
}

class InvalidDocument extends Error {
  constructor() {
    super('not a key set or discovery document');
  }
}
