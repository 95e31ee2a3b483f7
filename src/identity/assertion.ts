// The identity assertion: a short-lived JWT the gateway signs for the upstream, per credential.
import { effectiveScopesHeader } from '../plans/effective-scopes.js';
import type { CompiledPlan } from '../route-table/types.js';
import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { LRUCache } from 'lru-cache';
import { growingLru } from '../credentials/growing-lru.js';
import type { ScopeGrant, ScopeTable } from '../authz/scopes.js';
import type { Environment } from '../config/config.js';
import type { Principal } from '../credentials/principal.js';
import type { Invalidation } from '../store/invalidation.js';
import { firstMemberId } from '../store/members.js';
import type { SigningKey } from './signing-keys.js';

/** The header that carries it, on every forwarded request; a client's own is always removed. */
export const IDENTITY_HEADER = 'x-authgate-identity';

/** The organization as the assertion names it: personal data, so never a plain header. */
export type OrganizationProfile = Readonly<{ name: string; email: string }>;

/**
 * The claims (README "Verifying the identity in your service"):
 * iss, aud, sub (organization id), name, email, environment, kind (`jwt` or `api_key`),
 * key_id (an API key's id; absent for a login token), idp and idp_sub (a provider token's issuer
 * name and subject; issue 49), member_id (a login token's member, issue 50; absent for an API key,
 * which is the organization's), scope (space-separated), iat, exp, jti.
 */
export type IdentityClaims = Readonly<{
  iss: string;
  aud: string;
  sub: string;
  name: string;
  email: string;
  environment: Environment;
  kind: Principal['via'];
  key_id?: string;
  /** A provider token's (kind issuer_token, issue 49): the routes file's name of its issuer, and the token's `sub`. */
  idp?: string;
  idp_sub?: string;
  /** A login token's member (`mem_…`; the organization's first member for its own login): issue 50. */
  member_id?: string;
  scope: string;
  iat: number;
  exp: number;
  jti: string;
}>;

export type IdentityAsserter = {
  /**
   * The assertion for this principal and audience (the route's upstream's: CompiledUpstream.audience;
   * the asserter's own when not given), when one signed for its credential and that audience is
   * still fresh: the hot path, no promise.
   */
  current(principal: Principal, audience?: string): string | undefined;
  /**
   * Signs a new one (sharing a signing already under way for the credential) and keeps it; undefined
   * when the organization is gone (the caller refuses the request as revoked).
   */
  sign(principal: Principal, audience?: string): Promise<string | undefined>;
  /**
   * From the invalidation bus: a `profile` change (an organization's name or e-mail) drops the
   * profile kept for that organization and every assertion signed with it, so the next request
   * is signed with what the store holds now; 'all' drops everything.
   */
  invalidate(invalidation: Invalidation): void;
};

type Memo = { token: string; orgId: string; scopes: ScopeGrant; table: ScopeTable; plan: CompiledPlan | undefined; refreshAt: number };

/** A credential's memo under an audience: one per (credential, audience), so two upstreams never get each other's `aud`. */
const memoKey = (credentialId: string, audience: string) => `${credentialId} ${audience}`;

/**
 * Signing costs about as much as forwarding a request, so an assertion is kept per credential (an
 * API key's id or a login session's) and re-signed only once half its lifetime has passed: an
 * upstream always receives one with at least half its lifetime left, and a credential in steady
 * use costs one signing per half-lifetime. The `jti` therefore names the assertion, not the
 * request (`x-request-id` does that). A credential whose scopes changed is signed anew at once.
 * The organization's name and e-mail are read from the store when a credential is first signed
 * for, and kept with it.
 */
export function createIdentityAsserter(deps: {
  key: SigningKey;
  issuer: string;
  /** The `aud` when the caller names none (the default upstream's). */
  audience: string;
  ttlSeconds: number;
  environment: Environment;
  now: () => number;
  /** The organization's name and e-mail (the store's record); undefined when it is gone. */
  organization: (orgId: string) => Promise<OrganizationProfile | undefined>;
  /** How many credentials' assertions are kept (the credential cache's size). */
  max: number;
  /** The live table's scopes: the `scope` claim lists the held ones it declares. */
  scopes: () => ScopeTable;
  /** The organization's plan under the live table (issue 47): the `scope` claim lists only its scopes. */
  plan?: (orgId: string) => CompiledPlan | undefined;
  /**
   * The member a login session was opened by (store MemberStore.sessionMemberId: undefined for the
   * first member's). Read when a session is first signed for and kept per session, which never
   * changes member: no read per request, none at a re-signing.
   */
  sessionMember?: (orgId: string, sessionId: string) => Promise<string | undefined>;
}): IdentityAsserter {
  const { key: signingKey, issuer, ttlSeconds, environment, now } = deps;
  const memos = new LRUCache<string, Memo>(growingLru(Math.max(1, deps.max)));
  const profiles = new LRUCache<string, OrganizationProfile>({ ...growingLru(Math.max(1, deps.max)), ttl: ttlSeconds * 1000 });
  const signing = new Map<string, Promise<string | undefined>>();
  /**
   * The memo last found for each principal, with its audience: the credential cache hands out the
   * same Principal object request after request, so current() finds its memo by that object (a
   * WeakMap) before making and hashing the memo's key string (the authorization port's hot path,
   * issue 30's fifth step, docs/performance.md). Only a memo found in `memos` is remembered here,
   * and it is checked as any (scopes, table, refreshAt): a memo evicted from `memos` for room is as
   * valid as before. invalidate() empties it with the memos.
   */
  let found = new WeakMap<Principal, { audience: string; memo: Memo }>();
  const planOf = deps.plan ?? (() => undefined);
  const sessionMembers = new LRUCache<string, string>(growingLru(Math.max(1, deps.max)));

  /** The member a login session acts as, kept per session; undefined for other credentials. */
  async function memberOf(principal: Principal): Promise<string | undefined> {
    if (principal.via !== 'jwt' || deps.sessionMember === undefined) return undefined;
    const kept = sessionMembers.get(principal.credentialId);
    if (kept !== undefined) return kept;
    const member = (await deps.sessionMember(principal.orgId, principal.credentialId)) ?? firstMemberId(principal.orgId);
    sessionMembers.set(principal.credentialId, member);
    return member;
  }
  // A moved organization (another plan) is signed anew at once, as a key whose scopes changed.
  const fresh = (memo: Memo, principal: Principal): boolean => memo.scopes === principal.scopes && memo.table === deps.scopes() && memo.plan === planOf(principal.orgId) && now() < memo.refreshAt;
  const header = { alg: signingKey.alg, kid: signingKey.kid, typ: 'JWT' };

  /**
   * Per organization, how many profile changes this replica has heard of: a read of the profile
   * that a change overtook (the change heard while the read was in flight) is used once, never kept.
   */
  const generations = new Map<string, number>();

  async function signFor(principal: Principal, audience: string, key: string): Promise<string | undefined> {
    let profile = profiles.get(principal.orgId);
    let keep = true;
    if (profile === undefined) {
      const generation = generations.get(principal.orgId);
      profile = await deps.organization(principal.orgId);
      if (profile === undefined) return undefined;
      keep = generations.get(principal.orgId) === generation;
      if (keep) profiles.set(principal.orgId, profile);
    }
    const memberId = await memberOf(principal);
    const table = deps.scopes();
    const plan = planOf(principal.orgId);
    const t = now();
    const iat = Math.floor(t / 1000);
    const claims: Omit<IdentityClaims, 'iss' | 'aud' | 'sub' | 'iat' | 'exp' | 'jti'> = {
      name: profile.name,
      email: profile.email,
      environment,
      kind: principal.via,
      ...(principal.via === 'api_key' && { key_id: principal.credentialId }),
      ...(principal.via === 'issuer_token' && { idp: principal.issuer, idp_sub: principal.subject }),
      ...(memberId !== undefined && { member_id: memberId }),
      scope: effectiveScopesHeader(principal.scopes, table, plan),
    };
    const token = await new SignJWT(claims)
      .setProtectedHeader(header)
      .setIssuer(issuer)
      .setAudience(audience)
      .setSubject(principal.orgId)
      .setIssuedAt(iat)
      .setExpirationTime(iat + ttlSeconds)
      .setJti(randomUUID())
      .sign(signingKey.privateKey);
    if (keep && profiles.get(principal.orgId) === profile) memos.set(key, { token, orgId: principal.orgId, scopes: principal.scopes, table, plan, refreshAt: iat * 1000 + (ttlSeconds * 1000) / 2 });
    return token;
  }

  return {
    current(principal, audience = deps.audience) {
      const last = found.get(principal);
      if (last !== undefined && last.audience === audience && fresh(last.memo, principal)) return last.memo.token;
      // Not found here, or no longer fresh: `memos` may hold a newer one (signed since).
      const memo = memos.get(memoKey(principal.credentialId, audience));
      if (memo === undefined) return undefined;
      found.set(principal, { audience, memo });
      return fresh(memo, principal) ? memo.token : undefined;
    },
    sign(principal, audience = deps.audience) {
      const id = memoKey(principal.credentialId, audience);
      let pending = signing.get(id);
      if (pending === undefined) {
        pending = signFor(principal, audience, id).finally(() => signing.delete(id));
        signing.set(id, pending);
      }
      return pending;
    },
    invalidate(invalidation) {
      // A rare event: every principal's memo is looked up in `memos` again.
      found = new WeakMap();
      if (invalidation === 'all') {
        profiles.clear();
        memos.clear();
        return;
      }
      for (const { kind, cacheKey: orgId } of invalidation) {
        if (kind !== 'profile') continue;
        generations.set(orgId, (generations.get(orgId) ?? 0) + 1);
        profiles.delete(orgId);
        // A rare event (a person edits a form): a walk over the kept assertions is fine.
        const stale: string[] = [];
        memos.forEach((memo, id) => {
          if (memo.orgId === orgId) stale.push(id);
        });
        for (const id of stale) memos.delete(id);
      }
    },
  };
}
