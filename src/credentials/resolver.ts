import { ALL_SCOPES_GRANT, grantOf } from '../authz/scopes.js';
import type { Environment } from '../config/config.js';
import { apiKeyCacheKey, sessionCacheKey, type CredentialCache } from './cache.js';
import type { Store } from '../store/store.js';
import { apiKeyShape, checksumMatches, looksLikeApiKey } from './api-keys.js';
import type { CredentialKind, DenialReason } from './decisions.js';
import { sha256Base64url } from './digest.js';
import type { TokenService } from './jwt.js';
import { NOT_ISSUED, type IssuerTokenResolver } from './issuer-tokens.js';
import type { Principal } from './principal.js';
import type { RouteCredentials } from '../route-table/types.js';

/**
 * Bearer token → Principal. The kind is picked by shape (`agk_` or not), never by trying each;
 * the cache answers first and the store only on a miss. Throws (or rejects with)
 * StoreUnavailable when the store had to be asked and could not answer: the caller turns that
 * into a 503, never a 401.
 *
 * A cache hit is answered synchronously (no promise at all); only a miss returns a promise.
 * The checks do not change with it: the key's format and checksum, its environment, the
 * token's signature (once per token, then its memo until its own `exp`) and the cache, which a
 * revocation empties at once.
 */
export type Resolution =
  | Readonly<{ ok: true; principal: Principal }>
  | Readonly<{ ok: false; kind: CredentialKind; reason: DenialReason; environment?: Environment; /** With issuer_keys_unavailable or issuer_introspection_unavailable: when to come back. */ retryAfterSeconds?: number }>;

export interface CredentialResolver {
  /** `credentials`: the matched route's; only they can send an opaque token to an issuer's introspection (issue 49). */
  resolve(token: string, credentials?: RouteCredentials): Resolution | Promise<Resolution>;
  /**
   * resolve(), only where it answers without the store or a signature check (a cache hit, or a
   * refusal by shape); undefined otherwise, having started nothing (proxy/fast-path.ts).
   */
  resolveCached(token: string, credentials?: RouteCredentials): Resolution | undefined;
}

const denied = (kind: CredentialKind, reason: DenialReason): Resolution => Object.freeze({ ok: false, kind, reason });
const MALFORMED_KEY = denied('api_key', 'malformed_key');
const BAD_CHECKSUM = denied('api_key', 'bad_checksum');
const UNKNOWN_KEY = denied('api_key', 'unknown_key');
const EXPIRED_KEY = denied('api_key', 'expired_key');
const REVOKED_TOKEN = denied('jwt', 'revoked_token');

export function createResolver(deps: {
  store: Store;
  cache: CredentialCache;
  tokens: TokenService;
  environment: Environment;
  now: () => number;
  /** Provider tokens (issue 49): asked first for a bearer token that is no API key. */
  issuerTokens?: IssuerTokenResolver;
}): CredentialResolver {
  const { store, cache, tokens, environment, now, issuerTokens } = deps;

  /**
   * A bearer token that is no API key: a warm login token is answered by its memo before a
   * provider token is looked for (no payload decoded for it); the digest is computed once for both.
   */
  function resolveToken(token: string, cachedOnly: boolean, credentials: RouteCredentials | undefined): Resolution | Promise<Resolution> | undefined {
    const digest = sha256Base64url(token);
    if (issuerTokens !== undefined) {
      const memo = cache.verifiedToken(digest);
      if (memo === undefined || memo.expiresAtMs <= now()) {
        const issued = issuerTokens.resolve(token, digest, cachedOnly, credentials);
        if (issued !== NOT_ISSUED) return issued;
      }
    }
    return resolveJwt(token, cachedOnly, digest);
  }

  function resolveApiKey(token: string, cachedOnly: boolean): Resolution | Promise<Resolution> | undefined {
    const shape = apiKeyShape(token);
    if (shape === undefined) return MALFORMED_KEY;
    const key = apiKeyCacheKey(shape.hash);
    const cached = cache.peek(key);
    // A key the cache holds was checked in full before it was stored (below): its checksum and
    // environment are right, and checking the checksum again on every request costs a CRC-32
    // (the authorization port's hot path, docs/performance.md). Anything else is checked in
    // full, in the same order as ever: checksum, environment, then known or not.
    if (cached !== undefined && cached !== null && shape.environment === environment) return keyPrincipal(cached);
    if (!checksumMatches(token)) return BAD_CHECKSUM;
    if (shape.environment !== environment) return { ok: false, kind: 'api_key', reason: 'wrong_environment', environment: shape.environment };
    if (cached === null) return UNKNOWN_KEY;
    return cachedOnly ? undefined : loadApiKey(key, shape.hash);
  }

  /**
   * A key past its expiresAt is refused by this replica's clock, from the cache as from the store:
   * nothing is written when a key expires, so no revocation announces it.
   */
  function keyPrincipal(principal: Principal): Resolution {
    return principal.expiresAt !== undefined && principal.expiresAt <= now() ? EXPIRED_KEY : { ok: true, principal };
  }

  async function loadApiKey(key: string, hash: string): Promise<Resolution> {
    const principal = await cache.principal(key, async () => {
      const record = await store.findApiKeyByHash(hash);
      if (record === undefined) return undefined;
      const scopes = grantOf(record.scopes);
      if (record.expiresAt === undefined) return { principal: { orgId: record.orgId, via: 'api_key', credentialId: record.id, scopes } };
      // Cached no longer than the key lives (an expired key for a millisecond: the cache's least).
      return {
        principal: { orgId: record.orgId, via: 'api_key', credentialId: record.id, scopes, expiresAt: record.expiresAt },
        ttlMs: record.expiresAt - now(),
      };
    });
    return principal ? keyPrincipal(principal) : UNKNOWN_KEY;
  }

  function resolveJwt(token: string, cachedOnly: boolean, digest: string): Resolution | Promise<Resolution> | undefined {
    const t = now();
    const memo = cache.verifiedToken(digest);
    if (memo === undefined || memo.expiresAtMs <= t) return cachedOnly ? undefined : verifyJwt(token, digest, t);
    return sessionPrincipal(memo.sessionId, cachedOnly);
  }

  /** The signature and claims, checked once per token; the memo lives until the token's exp. */
  async function verifyJwt(token: string, digest: string, t: number): Promise<Resolution> {
    const verified = await tokens.verify(token, t);
    if (!verified.ok) {
      const reason = verified.reason === 'expired' ? 'expired_token' : verified.reason === 'invalid' ? 'invalid_token' : 'wrong_environment';
      return { ok: false, kind: 'jwt', reason, ...(verified.environment && { environment: verified.environment }) };
    }
    cache.rememberVerifiedToken(digest, { sessionId: verified.sessionId, expiresAtMs: verified.expiresAtMs }, verified.expiresAtMs - t);
    return sessionPrincipal(verified.sessionId, false)!; // not cachedOnly: always an answer
  }

  /** The session behind a verified token: gone (logged out, deleted) means revoked. */
  function sessionPrincipal(sessionId: string, cachedOnly = false): Resolution | Promise<Resolution> | undefined {
    const key = sessionCacheKey(sessionId);
    const cached = cache.peek(key);
    if (cached !== undefined) return cached === null ? REVOKED_TOKEN : { ok: true, principal: cached };
    return cachedOnly ? undefined : loadSession(key, sessionId);
  }

  async function loadSession(key: string, sessionId: string): Promise<Resolution> {
    const principal = await cache.principal(key, async () => {
      const session = await store.findSession(sessionId);
      return session && {
        principal: { orgId: session.orgId, via: 'jwt', credentialId: session.id, scopes: ALL_SCOPES_GRANT }, // a login token holds every scope
        ttlMs: session.expiresAt - now(),
      };
    });
    return principal ? { ok: true, principal } : REVOKED_TOKEN;
  }

  return {
    resolve: (token, credentials) => (looksLikeApiKey(token) ? resolveApiKey(token, false) : resolveToken(token, false, credentials))!,
    resolveCached: (token, credentials) => {
      const resolved = looksLikeApiKey(token) ? resolveApiKey(token, true) : resolveToken(token, true, credentials);
      return resolved instanceof Promise ? undefined : resolved;
    },
  };
}
