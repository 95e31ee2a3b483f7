/**
 * Names of every Redis key and channel authgate uses. docs/redis-layout.md has the table.
 *
 * Every key starts with `${prefix}{${environment}:${tag}}:`, e.g. `authgate:{production:k3x}:`.
 * The braces are a Redis Cluster hash tag: Cluster places a key by its tag alone, and runs a
 * script only on keys of one slot. The tag is a shard tag (store/shard-tag.ts):
 * - an organization's: its record, its indexes and the per-tag hashes of its keys and sessions,
 *   so every step on one organization stays one script, and organizations spread over shards;
 * - an e-mail's own (shardTagOf of the e-mail): the e-mail → organization claim;
 * - a counter's, from the text in braces in its name (the login limits: per e-mail, per address);
 * - a fixed text's (`audit`, `limits`) for what is one per environment.
 * The environment is inside the tag, so production and sandbox never share a key, also on one
 * Redis. The channel keeps the environment-wide name: PUBLISH reaches every Cluster node anyway.
 *
 * Names are short on purpose: at millions of keys each byte of a name costs megabytes.
 */

import { shardTagOf } from '../shard-tag.js';

/** The keys of one shard tag of one environment. */
export type ShardKeys = Readonly<{
  /** `${prefix}{${environment}:${tag}}:` */
  base: string;
  /**
   * Hash: field = API-key digest (22 characters), value = `<packed org id> <packed key id>`, then
   * ` <expiresAt, base 36>` for a key that expires (replies.ts apiKeyValue).
   */
  apiKeys: string;
  /** Hash: field = session's random part, value = `<packed org id> <expiresAt, base 36>`. */
  sessions: string;
  /** What scripts append a packed organization id to, then `:k` or `:s`, to name its indexes. */
  organizationStem: string;
  /**
   * Hash: name, email, passwordHash, createdAt, and the organization's key index: one field
   * `k:<packed key id>` → `<digest><createdAt><space><displayPrefix>`, then ` <expiresAt or -> <name>`
   * for a key with a name or an expiry, per key (replies.ts apiKeyIndexEntry writes and reads it). In the record rather than a key of its own: a Redis key costs ~200 B more than a field,
   * which for an organization of one key doubled its cost.
   */
  organization(packedOrgId: string): string;
  /** Sorted set: session random part scored by expiresAt (epoch ms). */
  organizationSessions(packedOrgId: string): string;
  /**
   * Hash: session random part → `<createdAt, base 36> <client>` (the client last: it may hold
   * spaces), what the organization's listing shows; PX as the sorted set's.
   */
  organizationSessionInfo(packedOrgId: string): string;
  /**
   * Stream: the organization's own audit trail (issue 26), `<base>o:<packed org id>:a`, bounded
   * by the retention on its own, and expiring as a whole the age bound after its last append.
   */
  organizationAudit(packedOrgId: string): string;
  /** String: the organization id owning this normalized e-mail (under the e-mail's tag). */
  emailClaim(email: string): string;
  /** String with a PX TTL: a fixed-window counter (login attempts), named by the caller. */
  counter(name: string): string;
  /** Sorted set of members scored by when last seen (epoch ms): a login's known addresses. */
  knownSet(name: string): string;
  /**
   * Hash with a PX TTL of its window: a credential's rate-limit window (leaseRateBudget), on its
   * organization's shard (this ShardKeys must be of shardTagOf(orgId)): `s` start and `w` length
   * (ms, Redis's clock), `n` granted so far, and `p:<replica>` per replica that leased from it.
   */
  rateWindow(credentialId: string): string;
  /**
   * String with a PX TTL to its end: a password reset (store/password-resets.ts) by the digest of
   * its token, `<packed org id> <expiresAt, packMs>`, on its organization's shard. The
   * organization's record names its one live reset in its field `pr` (the digest).
   */
  passwordReset(digest: string): string;
  /**
   * Hash: the organization's TOTP factor (store/mfa.ts), `s` encrypted secret, `a` 1 when active,
   * `t` last used time step; beside it `:r`, a set of its recovery code hashes.
   */
  organizationTotp(packedOrgId: string): string;
  organizationRecoveryCodes(packedOrgId: string): string;
  /**
   * Hash: the organization's passkeys (store/passkeys.ts), four fields per credential id:
   * `k:<id>` JSON of what never changes (`p` public key, `t` transports, `c` createdAt), `n:<id>`
   * its name, `c:<id>` its signature counter, `u:<id>` its last use (epoch ms, 0 before the first).
   */
  organizationPasskeys(packedOrgId: string): string;
  /**
   * Hash: the organization's members (store/members.ts, redis/members.ts), member id → JSON
   * `{e,h,r,c}`; the first member's field only `{r}` or `{x:1}`. Beside it `:um`, session id →
   * member id, a session's link to its member (none for the first member's sessions).
   */
  organizationMembers(packedOrgId: string): string;
  organizationSessionMembers(packedOrgId: string): string;
  /** Hash: the organization's invitations, id → JSON (`:iv`); and `:uk`, API key id → the member who created it. */
  organizationInvitations(packedOrgId: string): string;
  organizationKeyCreators(packedOrgId: string): string;
  /** String with a PX TTL: the organization's pending passkey registration, `<expiresAt> <challenge>`. */
  organizationPasskeyRegistration(packedOrgId: string): string;
  /** Hash with a PX TTL: a login's second-factor challenge by its token's digest, `o` `p` `e` `f`. */
  mfaChallenge(digest: string): string;
  /**
   * Hash expiring 7 (`h`) or 90 (`d`) days after its start: the organization's usage in one UTC
   * hour or day (store/usage.ts), `<outcome index>` its own counts, `k<key id>:<outcome index>` a key's;
   * named by the bucket's start in hours, base 36.
   */
  organizationUsage(packedOrgId: string, granularity: 'h' | 'd', start: number): string;
  /**
   * Hash expiring a day after its period: what the organization's quota period (store/quotas.ts)
   * counted, `o` the organization's, `k<key id>` a key's own; named by the period (`d2026-12-07`, `m2026-12`).
   */
  organizationQuota(packedOrgId: string, period: string): string;
}>;

export type RedisKeys = Readonly<{
  /** `${prefix}{${environment}` : what every key starts with (then `:<tag>}:`). */
  environmentBase: string;
  /** The pub/sub channel revocations travel on: `${prefix}{${environment}}:invalidations`. */
  invalidationChannel: string;
  /**
   * Stream: the environment's audit events of no organization (a failed login by an unknown
   * e-mail), `<base>a` under the shard tag of the text `audit` (one shard holds it; the name
   * cannot meet an organization's keys there). Each organization's are in organizationAudit.
   */
  auditStream: string;
  /**
   * Sorted set beside auditStream: organization id → epoch ms of its trail's last append, for
   * the admin-wide read to find every organization's trail (entries older than the age bound go).
   */
  auditIndex: string;
  /** String beside auditStream: the last audit sequence number handed out (INCRBY per append). */
  auditSequence: string;
  /**
   * Hash: the environment's rate-limit overrides, `<base>l` under the shard tag of the text
   * `limits`; `o:<org id>` → limit, `k:<key id>` → `<org id> <limit>`. Small (overrides only),
   * and read whole by every replica when it changes.
   */
  rateLimits: string;
  /** Hash beside rateLimits: organization id → its own plan's name (issue 47). Small, read whole by every replica. */
  organizationPlans: string;
  /** Hash beside rateLimits: API key id → `<org id> <quota>`, its own quota (issue 47). Small, read whole by every replica. */
  keyQuotas: string;
  shard(tag: string): ShardKeys;
}>;

export function redisKeys(prefix: string, environment: string): RedisKeys {
  // A brace in either part would move or split the hash tag, and with it the one-slot guarantee.
  if (/[{}]/.test(prefix) || /[{}]/.test(environment)) {
    throw new Error('the Redis key prefix and the environment must not contain "{" or "}"');
  }
  if (environment.length === 0) throw new Error('the environment must not be empty');

  const environmentBase = `${prefix}{${environment}`;
  const shard = (tag: string): ShardKeys => {
    const base = `${environmentBase}:${tag}}:`;
    const organizationStem = `${base}o:`;
    return {
      base,
      apiKeys: `${base}k`,
      sessions: `${base}s`,
      organizationStem,
      organization: (packedOrgId) => organizationStem + packedOrgId,
      organizationSessions: (packedOrgId) => `${organizationStem}${packedOrgId}:s`,
      organizationSessionInfo: (packedOrgId) => `${organizationStem}${packedOrgId}:m`,
      organizationAudit: (packedOrgId) => `${organizationStem}${packedOrgId}:a`,
      emailClaim: (email) => `${base}e:${email}`,
      counter: (name) => `${base}c:${name}`,
      knownSet: (name) => `${base}n:${name}`,
      rateWindow: (credentialId) => `${base}r:${credentialId}`,
      passwordReset: (digest) => `${base}p:${digest}`,
      organizationTotp: (packedOrgId) => `${organizationStem}${packedOrgId}:f`,
      organizationRecoveryCodes: (packedOrgId) => `${organizationStem}${packedOrgId}:r`,
      organizationPasskeys: (packedOrgId) => `${organizationStem}${packedOrgId}:w`,
      organizationPasskeyRegistration: (packedOrgId) => `${organizationStem}${packedOrgId}:wr`,
      mfaChallenge: (digest) => `${base}m:${digest}`,
      organizationUsage: (packedOrgId, granularity, start) => `${organizationStem}${packedOrgId}:u${granularity}:${Math.floor(start / 3_600_000).toString(36)}`,
      organizationQuota: (packedOrgId, period) => `${organizationStem}${packedOrgId}:q:${period}`,
      organizationMembers: (packedOrgId) => `${organizationStem}${packedOrgId}:u`,
      organizationSessionMembers: (packedOrgId) => `${organizationStem}${packedOrgId}:um`,
      organizationInvitations: (packedOrgId) => `${organizationStem}${packedOrgId}:iv`,
      organizationKeyCreators: (packedOrgId) => `${organizationStem}${packedOrgId}:uk`,
    };
  };
  return Object.freeze({
    environmentBase,
    invalidationChannel: `${environmentBase}}:invalidations`,
    auditStream: `${shard(shardTagOf('audit')).base}a`,
    auditIndex: `${shard(shardTagOf('audit')).base}ai`,
    auditSequence: `${shard(shardTagOf('audit')).base}aq`,
    rateLimits: `${shard(shardTagOf('limits')).base}l`,
    organizationPlans: `${shard(shardTagOf('limits')).base}pl`,
    keyQuotas: `${shard(shardTagOf('limits')).base}kq`,
    shard,
  });
}
