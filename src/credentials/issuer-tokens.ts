/**
 * Provider tokens (issue 49) → Principal, beside the gateway's own credentials (resolver.ts asks
 * here first for a bearer token that is no API key). A token is one of a trusted issuer's when its
 * unverified `iss` is one the live table declares (the shape picks the path, as `agk_` does for
 * keys); it is then verified against that issuer only (issuers/verify.ts), once, and the result
 * kept until its own `exp`, like a login token's. Its organization is found by its external id at
 * the issuer (store/external-ids.ts) or is the issuer's fixed one; that lookup is cached like a
 * credential, and dropped at once when the organization is deleted or its external ids change
 * (the `organization` revocation, every replica), so its provider tokens are refused at once.
 *
 * An opaque token (RFC 7662) is one that is neither an API key (`agk_`, taken before this) nor
 * shaped as a JWT (three dot-separated parts, as authgate's own login tokens are): when the route
 * it was sent to takes an issuer with introspection (one at most), it is asked about there
 * (issuers/introspect.ts) and an active answer kept until the earlier of its `exp` and the
 * issuer's `cacheSeconds`; otherwise it goes the login-token way and is refused as ever, and no
 * provider is ever sent a token for a route that does not take its tokens.
 */
import { LRUCache } from 'lru-cache';
import { BUILTIN_SCOPES, grantOf } from '../authz/scopes.js';
import { IntrospectionUnavailable } from '../issuers/introspect.js';
import { KeysUnavailable } from '../issuers/keys.js';
import type { IntrospectedIssuer, IssuerRegistry, KeyedIssuer } from '../issuers/registry.js';
import { verifyIssuerToken, type IssuerRefusal, type VerifiedIssuerToken } from '../issuers/verify.js';
import type { ExternalIdStore } from '../store/external-ids.js';
import type { Invalidation, InvalidationBus } from '../store/invalidation.js';
import type { RouteCredentials } from '../route-table/types.js';
import type { Store } from '../store/store.js';
import type { DenialReason } from './decisions.js';
import { growingLru } from './growing-lru.js';
import type { Principal } from './principal.js';
import type { Resolution } from './resolver.js';

/** Not a token of any trusted issuer: the gateway's own login-token path takes it. */
export const NOT_ISSUED = Symbol('not a provider token');

export type IssuerTokenResolver = Readonly<{
  /**
   * `digest`: the token's sha256 (digest.ts), which the caller has computed already; `credentials`:
   * the matched route's, which name the introspecting issuer an opaque token is sent to (none: no introspection).
   */
  resolve(token: string, digest: string, cachedOnly: boolean, credentials?: RouteCredentials): Resolution | Promise<Resolution> | undefined | typeof NOT_ISSUED;
}>;

/** `untilMs`: the token's `exp`, or for an introspected one the earlier of that and its cache bound. */
type Memo = Readonly<{ issuer: string; orgKey: string; verified: VerifiedIssuerToken; untilMs: number; principal: Principal | undefined }>;

const BUILTIN = new Set<string>(BUILTIN_SCOPES);
const refused = (reason: DenialReason, retryAfterSeconds?: number): Resolution => ({ ok: false, kind: 'issuer_token', reason, ...(retryAfterSeconds !== undefined && { retryAfterSeconds }) });

export function createIssuerTokenResolver(deps: {
  registry: IssuerRegistry;
  store: Pick<Store, 'findOrganizationById'> & Pick<ExternalIdStore, 'findOrganizationIdByExternalId'>;
  bus: Pick<InvalidationBus, 'onInvalidation' | 'onSubscriptionChange' | 'subscribed'>;
  cache: Readonly<{ max: number; ttlSeconds: number; negativeTtlSeconds: number }>;
  now: () => number;
  onRefused: (issuer: string, reason: IssuerRefusal) => void;
}): IssuerTokenResolver {
  const { registry, store, now } = deps;
  const max = Math.max(1, deps.cache.max);
  const memos = new LRUCache<string, Memo>({ ...growingLru(max), ttlResolution: 0, ttl: Math.max(1, deps.cache.ttlSeconds) * 1000 });
  /** `<issuer>\n<external id>` or `\n<org id>` (fixed) → the organization's id, or null for none. */
  const organizations = new LRUCache<string, string | 0>({ ...growingLru(max), ttlResolution: 0, ttl: Math.max(1, deps.cache.ttlSeconds) * 1000 });
  const loading = new Map<string, Promise<string | 0>>();
  let caching = deps.bus.subscribed;
  let generation = 0;

  deps.bus.onSubscriptionChange((subscribed) => {
    generation++;
    organizations.clear();
    caching = subscribed;
  });
  deps.bus.onInvalidation((invalidation: Invalidation) => {
    if (invalidation === 'all') {
      generation++;
      organizations.clear();
      return;
    }
    for (const revoked of invalidation) {
      if (revoked.kind !== 'organization') continue;
      generation++;
      // Rare (a deletion, a change of external ids): a scan is cheaper than an index kept on every lookup.
      for (const [key, orgId] of organizations.entries()) if (orgId === revoked.cacheKey || orgId === 0) organizations.delete(key);
    }
  });

  function loadOrganization(orgKey: string): Promise<string | 0> {
    let pending = loading.get(orgKey);
    if (pending !== undefined) return pending;
    const started = generation;
    const newline = orgKey.indexOf('\n');
    const lookup = newline === 0 ? store.findOrganizationById(orgKey.slice(1)).then((org) => org?.id) : store.findOrganizationIdByExternalId(orgKey.slice(0, newline), orgKey.slice(newline + 1));
    pending = lookup
      .then((orgId) => {
        const value = orgId ?? 0;
        // A revocation since the read began: what it read may be gone; the next request reads again.
        if (caching && started === generation) organizations.set(orgKey, value, value === 0 ? { ttl: Math.max(1, deps.cache.negativeTtlSeconds * 1000) } : {});
        return value;
      })
      .finally(() => loading.delete(orgKey));
    loading.set(orgKey, pending);
    return pending;
  }

  /** The principal of a verified token, once its organization is known (cached: synchronously). */
  function principalOf(digest: string, memo: Memo, cachedOnly: boolean): Resolution | Promise<Resolution> | undefined {
    const orgId = caching ? organizations.get(memo.orgKey) : undefined;
    if (orgId !== undefined) return admitted(digest, memo, orgId);
    if (cachedOnly) return undefined;
    return loadOrganization(memo.orgKey).then((found) => admitted(digest, memo, found));
  }

  function admitted(digest: string, memo: Memo, orgId: string | 0): Resolution {
    if (orgId === 0) {
      deps.onRefused(memo.issuer, 'unknown_organization');
      return refused('unknown_organization');
    }
    if (memo.principal !== undefined && memo.principal.orgId === orgId) return { ok: true, principal: memo.principal };
    const { verified } = memo;
    const principal: Principal = {
      orgId,
      via: 'issuer_token',
      credentialId: `${memo.issuer}:${verified.subject}`,
      scopes: grantOf(verified.scopes.filter((name) => !BUILTIN.has(name))), // the gateway's own API is never a provider's to grant
      issuer: memo.issuer,
      subject: verified.subject,
    };
    const left = memo.untilMs - now();
    if (left > 0) memos.set(digest, { ...memo, principal }, { ttl: left });
    return { ok: true, principal };
  }

  async function verify(token: string, digest: string, trusted: KeyedIssuer): Promise<Resolution> {
    const name = trusted.issuer.name;
    let verified;
    try {
      verified = await verifyIssuerToken(token, trusted.issuer, trusted.keys, trusted.options, now());
    } catch (error) {
      if (!(error instanceof KeysUnavailable)) throw error;
      deps.onRefused(name, 'keys_unavailable');
      return refused('issuer_keys_unavailable', error.retryAfterSeconds);
    }
    return verified.ok ? remembered(digest, name, verified, verified.expiresAtMs) : refusal(name, verified.reason);
  }

  /** An opaque token asked about at its issuer's endpoint (issuers/introspect.ts): one call per token at a time. */
  async function introspect(token: string, digest: string, trusted: IntrospectedIssuer): Promise<Resolution> {
    const name = trusted.issuer.name;
    let answer;
    try {
      answer = await trusted.introspector.introspect(token, digest);
    } catch (error) {
      if (!(error instanceof IntrospectionUnavailable)) throw error;
      deps.onRefused(name, 'introspection_unavailable');
      return refused('issuer_introspection_unavailable', error.retryAfterSeconds);
    }
    return answer.ok ? remembered(digest, name, answer, answer.reuseUntilMs) : refusal(name, answer.reason);
  }

  function refusal(issuer: string, reason: IssuerRefusal): Resolution {
    deps.onRefused(issuer, reason);
    return refused(reason === 'expired' ? 'expired_token' : reason === 'no_organization' ? 'unknown_organization' : 'invalid_token');
  }

  /** A checked token kept until `untilMs`, then its organization. */
  function remembered(digest: string, issuer: string, verified: VerifiedIssuerToken, untilMs: number): Resolution | Promise<Resolution> {
    const orgKey = 'orgId' in verified.organization ? `\n${verified.organization.orgId}` : `${issuer}\n${verified.organization.externalId}`;
    const memo: Memo = { issuer, orgKey, verified, untilMs, principal: undefined };
    const left = untilMs - now();
    if (left > 0) memos.set(digest, memo, { ttl: left });
    return principalOf(digest, memo, false)!;
  }

  function introspectedOf(names: ReadonlySet<string>): IntrospectedIssuer | undefined {
    for (const name of names) {
      const introspected = registry.introspected(name);
      if (introspected !== undefined) return introspected;
    }
    return undefined;
  }

  return {
    resolve(token, digest, cachedOnly, credentials) {
      if (!registry.any()) return NOT_ISSUED;
      const memo = memos.get(digest);
      if (memo !== undefined && memo.untilMs > now()) return principalOf(digest, memo, cachedOnly);
      if (!isCompactJws(token)) {
        // No JWT (so no login token) and no API key (resolver.ts took those): an opaque token, for
        // the introspecting issuer the route takes (one at most: compile.ts), if it takes one.
        const opaque = credentials?.kind === 'bearer' && credentials.issuers.size > 0 ? introspectedOf(credentials.issuers) : undefined;
        if (opaque === undefined) return NOT_ISSUED;
        return cachedOnly ? undefined : introspect(token, digest, opaque);
      }
      const iss = issuerOf(token);
      const trusted = iss === undefined ? undefined : registry.byIss(iss);
      if (trusted === undefined) return NOT_ISSUED;
      return cachedOnly ? undefined : verify(token, digest, trusted);
    },
  };
}

/** Three dot-separated parts: a JWT's shape (authgate's own login tokens have it), never taken for an opaque token. */
function isCompactJws(token: string): boolean {
  const first = token.indexOf('.');
  const second = first < 0 ? -1 : token.indexOf('.', first + 1);
  return second >= 0 && token.indexOf('.', second + 1) < 0;
}

/** The unverified `iss` of a compact JWT: only to pick which issuer's keys to check it with. */
function issuerOf(token: string): string | undefined {
  const first = token.indexOf('.');
  const second = token.indexOf('.', first + 1);
  if (first < 0 || second < 0 || token.indexOf('.', second + 1) >= 0) return undefined;
  try {
    const payload: unknown = JSON.parse(Buffer.from(token.slice(first + 1, second), 'base64url').toString('utf8'));
    const iss = typeof payload === 'object' && payload !== null ? (payload as { iss?: unknown }).iss : undefined;
    return typeof iss === 'string' ? iss : undefined;
  } catch {
    return undefined;
  }
}
