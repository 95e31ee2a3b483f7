/**
 * Names of every Redis key and channel authgate uses. docs/redis-layout.md has the table.
 *
 * Every name starts with `${prefix}{${environment}}:`, e.g. `authgate:{production}:org:…`.
 * The braces are a Redis Cluster hash tag, and there is exactly ONE for the whole deployment:
 * Cluster only runs a script or MULTI whose keys share a slot, and our atomic steps span an
 * organization, its e-mail, its keys and its sessions, while an API key is looked up by hash
 * without knowing its organization, so no per-organization tag could serve every step. With one
 * tag every key of an environment sits in one slot, so each Store method stays one Lua script,
 * and the scripts may derive further key names (an org's key records, its sessions) from the
 * stems below. The cost is that one environment's data lives on one shard: it is small (orgs,
 * key hashes, sessions), so Cluster buys high availability here, not capacity.
 */

export type RedisKeys = Readonly<{
  /** `${prefix}{${environment}}:`; every key and the channel start with it. */
  base: string;
  /** Hash: id, name, email, passwordHash, createdAt. */
  organization(orgId: string): string;
  /** String: the organization id owning this normalized e-mail. */
  organizationIdByEmail(email: string): string;
  /** Hash: id, orgId, hash, displayPrefix, createdAt. */
  apiKey(keyHash: string): string;
  /** Hash: keyId → key hash, for one organization. */
  organizationApiKeys(orgId: string): string;
  /** Hash with a PX TTL: id, orgId, expiresAt. */
  session(sessionId: string): string;
  /** Sorted set: session id scored by expiresAt, for one organization. */
  organizationSessions(orgId: string): string;
  /** String with a PX TTL: a fixed-window counter (login attempts), named by the caller. */
  counter(name: string): string;
  /** Sorted set of members scored by when last seen (epoch ms), named by the caller: a login's known addresses. */
  knownSet(name: string): string;
  /** The pub/sub channel revocations travel on. */
  invalidationChannel: string;
  /** The beginnings Lua scripts append an id to, to name keys they find in an index. */
  stems: Readonly<{
    organizationIdByEmail: string;
    apiKey: string;
    session: string;
    organizationSessions: string;
  }>;
}>;

export function redisKeys(prefix: string, environment: string): RedisKeys {
  // A brace in either part would move or split the hash tag, and with it the one-slot guarantee.
  if (/[{}]/.test(prefix) || /[{}]/.test(environment)) {
    throw new Error('the Redis key prefix and the environment must not contain "{" or "}"');
  }
  if (environment.length === 0) throw new Error('the environment must not be empty');

  const base = `${prefix}{${environment}}:`;
  const stems = {
    organization: `${base}org:`,
    organizationIdByEmail: `${base}org-email:`,
    apiKey: `${base}api-key:`,
    organizationApiKeys: `${base}org-api-keys:`,
    session: `${base}session:`,
    organizationSessions: `${base}org-sessions:`,
    counter: `${base}counter:`,
    knownSet: `${base}known:`,
  } as const;

  return Object.freeze({
    base,
    organization: (orgId: string) => stems.organization + orgId,
    organizationIdByEmail: (email: string) => stems.organizationIdByEmail + email,
    apiKey: (keyHash: string) => stems.apiKey + keyHash,
    organizationApiKeys: (orgId: string) => stems.organizationApiKeys + orgId,
    session: (sessionId: string) => stems.session + sessionId,
    organizationSessions: (orgId: string) => stems.organizationSessions + orgId,
    counter: (name: string) => stems.counter + name,
    knownSet: (name: string) => stems.knownSet + name,
    invalidationChannel: `${base}invalidations`,
    stems: Object.freeze({
      organizationIdByEmail: stems.organizationIdByEmail,
      apiKey: stems.apiKey,
      session: stems.session,
      organizationSessions: stems.organizationSessions,
    }),
  });
}
