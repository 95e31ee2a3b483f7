import type { Environment } from '../config/config.js';
import { apiKeyCacheKey, sessionCacheKey, type CredentialCache } from '../store/cache.js';
import type { Store } from '../store/store.js';
import { looksLikeApiKey, parseApiKey } from './api-keys.js';
import { createHash } from 'node:crypto';
import type { TokenService } from './jwt.js';
import type { Principal } from './principal.js';

/**
 * Bearer token → Principal. The kind is picked by shape (`agk_` or not), never by trying each;
 * the cache answers first and the store only on a miss. Throws StoreUnavailable when the store
 * had to be asked and could not answer: the caller turns that into a 503, never a 401.
 */
export type DenialReason =
  | 'malformed_key'
  | 'bad_checksum'
  | 'unknown_key'
  | 'invalid_token'
  | 'expired_token'
  | 'revoked_token'
  | 'wrong_environment';

export type Resolution =
  | Readonly<{ ok: true; principal: Principal }>
  | Readonly<{ ok: false; kind: 'jwt' | 'api_key'; reason: DenialReason; environment?: Environment }>;

export interface CredentialResolver {
  resolve(token: string): Promise<Resolution>;
}

export function createResolver(deps: {
  store: Store;
  cache: CredentialCache;
  tokens: TokenService;
  environment: Environment;
  now: () => number;
}): CredentialResolver {
  const { store, cache, tokens, environment, now } = deps;

  async function resolveApiKey(token: string): Promise<Resolution> {
    const parsed = parseApiKey(token);
    if (!parsed.ok) return { ok: false, kind: 'api_key', reason: parsed.reason === 'checksum' ? 'bad_checksum' : 'malformed_key' };
    if (parsed.environment !== environment) {
      return { ok: false, kind: 'api_key', reason: 'wrong_environment', environment: parsed.environment };
    }
    const principal = await cache.principal(apiKeyCacheKey(parsed.hash), async () => {
      const key = await store.findApiKeyByHash(parsed.hash);
      return key && { principal: { orgId: key.orgId, via: 'api_key', credentialId: key.id } };
    });
    return principal ? { ok: true, principal } : { ok: false, kind: 'api_key', reason: 'unknown_key' };
  }

  async function resolveJwt(token: string): Promise<Resolution> {
    const t = now();
    const digest = createHash('sha256').update(token).digest('base64url');
    let memo = cache.verifiedToken(digest);
    if (memo === undefined || memo.expiresAtMs <= t) {
      const verified = await tokens.verify(token, t);
      if (!verified.ok) {
        const reason = verified.reason === 'expired' ? 'expired_token' : verified.reason === 'invalid' ? 'invalid_token' : 'wrong_environment';
        return { ok: false, kind: 'jwt', reason, ...(verified.environment && { environment: verified.environment }) };
      }
      memo = { sessionId: verified.sessionId, expiresAtMs: verified.expiresAtMs };
      cache.rememberVerifiedToken(digest, memo, verified.expiresAtMs - t);
    }
    const { sessionId } = memo;
    const principal = await cache.principal(sessionCacheKey(sessionId), async () => {
      const session = await store.findSession(sessionId);
      return session && {
        principal: { orgId: session.orgId, via: 'jwt', credentialId: session.id },
        ttlMs: session.expiresAt - now(),
      };
    });
    return principal ? { ok: true, principal } : { ok: false, kind: 'jwt', reason: 'revoked_token' };
  }

  return {
    resolve: (token) => (looksLikeApiKey(token) ? resolveApiKey(token) : resolveJwt(token)),
  };
}
