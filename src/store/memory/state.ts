/**
 * What the memory store holds, by concern: one object every part (memory/*.ts) is given, so a
 * step that crosses concerns (deleting an organization drops its keys, sessions and limits) is
 * still one synchronous run over plain Maps, which is what makes each method atomic here.
 */
import type { ApiKeyRecord, Organization, Session } from '../store.js';
import type { StoredLimit } from '../rate-limits.js';
import type { Passkey, PasskeyRegistration } from '../passkeys.js';
import { createMemoryMembers, type MemoryMembers } from './members.js';

export type MemoryState = {
  now: () => number;
  // Organizations (organizations.ts).
  orgsById: Map<string, Organization>;
  orgIdByEmail: Map<string, string>;
  // API keys (api-keys.ts).
  keysByHash: Map<string, ApiKeyRecord>;
  /** orgId → keyId → hash; present from the organization's creation to its deletion. */
  keyHashesByOrg: Map<string, Map<string, string>>;
  /** keyId → epoch ms of its last recorded use. */
  lastUsedByKey: Map<string, number>;
  // Sessions (sessions.ts).
  sessions: Map<string, Session>;
  /** orgId → its session ids; present from the organization's creation to its deletion. */
  sessionIdsByOrg: Map<string, Set<string>>;
  // Login counters (counters.ts).
  counters: Map<string, { count: number; resetAt: number }>;
  /**
   * Known set → member → when last remembered (epoch ms), oldest first (a Map keeps insertion
   * order); the whole set is forgotten ttlMs after its last remember, as a Redis PEXPIRE does.
   */
  knownSets: Map<string, { seen: Map<string, number>; expiresAt: number }>;
  // Tenant limits (tenant-limits.ts): organizations' own API-key limits, gone with the organization.
  keyLimits: Map<string, number>;
  // Rate limits (rate-limits.ts).
  /**
   * The rate-limit overrides. Nothing announces a change here: this store has no bus, and the
   * caller applies it to this process (the only replica) itself.
   */
  orgRateLimits: Map<string, StoredLimit>;
  keyRateLimits: Map<string, { orgId: string; limit: StoredLimit }>;
  /** Per credential: its window (epoch ms), what it granted, and the replicas that leased from it. */
  rateWindows: Map<string, { start: number; windowMs: number; used: number; replicas: Set<string> }>;
  // Plans (organization-plans.ts): orgId → its own plan's name.
  orgPlans: Map<string, string>;
  // Password resets (password-resets.ts): orgId → its one live reset, gone with the organization;
  // another member's under `<orgId> <memberId>` (factor-holders.ts), gone with the member too.
  resetsByOrg: Map<string, { tokenHash: string; expiresAt: number }>;
  // Second factors (mfa.ts, passkeys.ts), by organization (another member's by factor-holders.ts's
  // key), gone with it. The recovery codes are
  // the organization's second factor's as a whole, so they are kept apart from either factor.
  totpByOrg: Map<string, { secret: string; active: boolean; lastStep: number }>;
  recoveryCodesByOrg: Map<string, Set<string>>;
  /** orgId → credential id → passkey, in the order added. */
  passkeysByOrg: Map<string, Map<string, Passkey>>;
  passkeyRegistrations: Map<string, PasskeyRegistration>;
  // External ids at trusted issuers (external-ids.ts), gone with the organization.
  externalIdsByOrg: Map<string, Readonly<Record<string, string>>>;
  /** `<issuer>\n<external id>` → orgId. */
  orgIdByExternalId: Map<string, string>;
  // Members (members.ts, issue 50): gone with the organization.
  members: MemoryMembers;
};

export function createMemoryState(now: () => number): MemoryState {
  return {
    now,
    orgsById: new Map(),
    externalIdsByOrg: new Map(),
    orgIdByExternalId: new Map(),
    orgIdByEmail: new Map(),
    keysByHash: new Map(),
    keyHashesByOrg: new Map(),
    lastUsedByKey: new Map(),
    sessions: new Map(),
    sessionIdsByOrg: new Map(),
    counters: new Map(),
    knownSets: new Map(),
    keyLimits: new Map(),
    orgRateLimits: new Map(),
    keyRateLimits: new Map(),
    rateWindows: new Map(),
    orgPlans: new Map(),
    resetsByOrg: new Map(),
    totpByOrg: new Map(),
    recoveryCodesByOrg: new Map(),
    passkeysByOrg: new Map(),
    passkeyRegistrations: new Map(),
    members: createMemoryMembers(),
  };
}

/**
 * One concern's part of the memory store: its methods, and what it forgets of expired state
 * when the sweeper runs (sessions of tokens nobody logs out of would otherwise stay forever).
 */
export type MemoryPart<Methods> = Readonly<{ methods: Methods; sweep?: (t: number) => void }>;
