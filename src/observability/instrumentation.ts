import type { DecisionRecorder } from '../credentials/decisions.js';
import type { InvalidationBus } from '../store/invalidation.js';
import { StoreUnavailable, type GatewayStore, type Revoked } from '../store/store.js';
import { registerCacheMetrics, registerSubscriptionMetric, type Metrics } from './metrics.js';

/**
 * Where the gateway's parts meet their metrics, so gateway.ts only wires: the store (every call
 * timed and its unavailability counted, the login counters included), the revocation bus
 * (revocations sent and received, the subscription), the credential cache (read at scrape time)
 * and the auth decisions. Each wrapper keeps the part's contract; none adds work to a cache hit.
 */
export type Instrumented = Readonly<{
  store: GatewayStore;
  bus: InvalidationBus;
  recordDecision: DecisionRecorder;
  /** Told each health ping's result. */
  onStoreUp: (up: boolean) => void;
}>;

export function instrument(storage: Pick<Instrumented, 'store' | 'bus'>, metrics: Metrics, cache: Parameters<typeof registerCacheMetrics>[1]): Instrumented {
  registerCacheMetrics(metrics, cache);
  return {
    store: instrumentStore(storage.store, metrics),
    bus: instrumentBus(storage.bus, metrics),
    recordDecision: decisionRecorder(metrics),
    onStoreUp: (up) => metrics.storeUp.set(up ? 1 : 0),
  };
}

/**
 * The store with its calls timed and its failures counted. Only store calls pay for this, and
 * those are cache misses, writes and login attempts, never a cache hit.
 */
export function instrumentStore(store: GatewayStore, metrics: Metrics): GatewayStore {
  const timed = <A extends unknown[], R>(operation: string, call: (...args: A) => Promise<R>) => {
    const duration = metrics.storeDuration.labels(operation);
    const errors = metrics.storeErrors.labels(operation);
    return async (...args: A): Promise<R> => {
      const end = duration.startTimer();
      try {
        return await call(...args);
      } catch (error) {
        if (error instanceof StoreUnavailable) errors.inc();
        throw error;
      } finally {
        end();
      }
    };
  };
  return {
    createOrganizationIfEmailFree: timed('create_organization', store.createOrganizationIfEmailFree.bind(store)),
    findOrganizationByEmail: timed('find_organization', store.findOrganizationByEmail.bind(store)),
    findOrganizationById: timed('find_organization', store.findOrganizationById.bind(store)),
    deleteOrganization: timed('delete_organization', store.deleteOrganization.bind(store)),
    createApiKey: timed('create_api_key', store.createApiKey.bind(store)),
    findApiKeyByHash: timed('find_api_key', store.findApiKeyByHash.bind(store)),
    listApiKeys: timed('list_api_keys', store.listApiKeys.bind(store)),
    findApiKeySummary: timed('find_api_key_summary', store.findApiKeySummary.bind(store)),
    changeApiKey: timed('change_api_key', store.changeApiKey.bind(store)),
    rollApiKey: timed('roll_api_key', store.rollApiKey.bind(store)),
    pruneExpiredApiKeys: timed('prune_api_keys', store.pruneExpiredApiKeys.bind(store)),
    recordApiKeyUse: timed('record_api_key_use', store.recordApiKeyUse.bind(store)),
    deleteApiKeyIfOwned: timed('delete_api_key', store.deleteApiKeyIfOwned.bind(store)),
    createSession: timed('create_session', store.createSession.bind(store)),
    findSession: timed('find_session', store.findSession.bind(store)),
    deleteSession: timed('delete_session', store.deleteSession.bind(store)),
    listSessions: timed('list_sessions', store.listSessions.bind(store)),
    deleteSessionIfOwned: timed('delete_session', store.deleteSessionIfOwned.bind(store)),
    deleteAllSessions: timed('delete_all_sessions', store.deleteAllSessions.bind(store)),
    countAttempt: timed('count_attempt', store.countAttempt.bind(store)),
    settleAttempt: timed('settle_attempt', store.settleAttempt.bind(store)),
    readCounters: timed('read_counters', store.readCounters.bind(store)),
    appendAuditEvents: timed('append_audit_events', store.appendAuditEvents.bind(store)),
    readAuditEvents: timed('read_audit_events', store.readAuditEvents.bind(store)),
    listOrganizations: timed('list_organizations', store.listOrganizations.bind(store)),
    readRateLimits: timed('read_rate_limits', store.readRateLimits.bind(store)),
    setRateLimit: timed('set_rate_limit', store.setRateLimit.bind(store)),
    readOrganizationPlans: timed('read_organization_plans', store.readOrganizationPlans.bind(store)),
    setOrganizationPlan: timed('set_organization_plan', store.setOrganizationPlan.bind(store)),
    readKeyQuotas: timed('read_key_quotas', store.readKeyQuotas.bind(store)),
    setKeyQuota: timed('set_key_quota', store.setKeyQuota.bind(store)),
    dropRateLimits: timed('drop_rate_limits', store.dropRateLimits.bind(store)),
    leaseRateBudget: timed('lease_rate_budget', store.leaseRateBudget.bind(store)),
    readKeyLimit: timed('read_key_limit', store.readKeyLimit.bind(store)),
    setKeyLimit: timed('set_key_limit', store.setKeyLimit.bind(store)),
    replacePassword: timed('replace_password', store.replacePassword.bind(store)),
    createPasswordReset: timed('create_password_reset', store.createPasswordReset.bind(store)),
    findPasswordReset: timed('find_password_reset', store.findPasswordReset.bind(store)),
    consumePasswordReset: timed('consume_password_reset', store.consumePasswordReset.bind(store)),
    changeOrganizationProfile: timed('change_organization_profile', store.changeOrganizationProfile.bind(store)),
    findTotp: timed('find_totp', store.findTotp.bind(store)),
    beginTotp: timed('begin_totp', store.beginTotp.bind(store)),
    activateTotp: timed('activate_totp', store.activateTotp.bind(store)),
    useTotpStep: timed('use_totp_step', store.useTotpStep.bind(store)),
    countRecoveryCodes: timed('count_recovery_codes', store.countRecoveryCodes.bind(store)),
    useRecoveryCode: timed('use_recovery_code', store.useRecoveryCode.bind(store)),
    replaceRecoveryCodes: timed('replace_recovery_codes', store.replaceRecoveryCodes.bind(store)),
    removeTotp: timed('remove_totp', store.removeTotp.bind(store)),
    createMfaChallenge: timed('create_mfa_challenge', store.createMfaChallenge.bind(store)),
    findMfaChallenge: timed('find_mfa_challenge', store.findMfaChallenge.bind(store)),
    failMfaChallenge: timed('fail_mfa_challenge', store.failMfaChallenge.bind(store)),
    consumeMfaChallenge: timed('consume_mfa_challenge', store.consumeMfaChallenge.bind(store)),
    listPasskeys: timed('list_passkeys', store.listPasskeys.bind(store)),
    setExternalIds: timed('set_external_ids', store.setExternalIds.bind(store)),
    readExternalIds: timed('read_external_ids', store.readExternalIds.bind(store)),
    findOrganizationIdByExternalId: timed('find_external_id', store.findOrganizationIdByExternalId.bind(store)),
    beginPasskeyRegistration: timed('begin_passkey_registration', store.beginPasskeyRegistration.bind(store)),
    takePasskeyRegistration: timed('take_passkey_registration', store.takePasskeyRegistration.bind(store)),
    addPasskey: timed('add_passkey', store.addPasskey.bind(store)),
    renamePasskey: timed('rename_passkey', store.renamePasskey.bind(store)),
    removePasskey: timed('remove_passkey', store.removePasskey.bind(store)),
    usePasskey: timed('use_passkey', store.usePasskey.bind(store)),
    removeSecondFactors: timed('remove_second_factors', store.removeSecondFactors.bind(store)),
    recordUsage: timed('record_usage', store.recordUsage.bind(store)),
    readUsage: timed('read_usage', store.readUsage.bind(store)),
    leaseQuota: timed('lease_quota', store.leaseQuota.bind(store)),
    returnQuota: timed('return_quota', store.returnQuota.bind(store)),
    readQuotaUsed: timed('read_quota_used', store.readQuotaUsed.bind(store)),
    createMemberIfEmailFree: timed('create_member', store.createMemberIfEmailFree.bind(store)),
    findMemberByEmail: timed('find_member', store.findMemberByEmail.bind(store)),
    findMember: timed('find_member', store.findMember.bind(store)),
    listMembers: timed('list_members', store.listMembers.bind(store)),
    changeMemberRole: timed('change_member', store.changeMemberRole.bind(store)),
    removeMember: timed('change_member', store.removeMember.bind(store)),
    linkSessionToMember: timed('link_session_member', store.linkSessionToMember.bind(store)),
    sessionMemberId: timed('find_session_member', store.sessionMemberId.bind(store)),
    linkedSessionIds: timed('list_member_sessions', store.linkedSessionIds.bind(store)),
    createInvitation: timed('create_invitation', store.createInvitation.bind(store)),
    listInvitations: timed('list_invitations', store.listInvitations.bind(store)),
    deleteInvitation: timed('delete_invitation', store.deleteInvitation.bind(store)),
    takeInvitation: timed('take_invitation', store.takeInvitation.bind(store)),
    recordKeyCreator: timed('record_key_creator', store.recordKeyCreator.bind(store)),
    setMemberPassword: timed('replace_password', store.setMemberPassword.bind(store)),
    createMemberPasswordReset: timed('create_password_reset', store.createMemberPasswordReset.bind(store)),
    consumeMemberPasswordReset: timed('consume_password_reset', store.consumeMemberPasswordReset.bind(store)),
    keyCreators: timed('key_creators', store.keyCreators.bind(store)),
    // The health ping is timed by nothing: authgate_store_up is its metric.
    ping: store.ping.bind(store),
    close: store.close.bind(store),
  };
}

/**
 * The bus with what crosses it counted. The store's revoking step announced a revocation to the
 * other replicas (on Redis, inside its script); what applyLocally counts as sent is what this
 * replica committed and so announced.
 */
export function instrumentBus(bus: InvalidationBus, metrics: Metrics): InvalidationBus {
  bus.onInvalidation((invalidation, publishedAt) => {
    if (invalidation === 'all') {
      metrics.invalidationsReceived.inc({ kind: 'all' });
      return;
    }
    // A rate-limit or profile change is no credential: counted apart, and not a revocation's propagation.
    const credentials = countCredentials(invalidation);
    if (credentials > 0) metrics.invalidationsReceived.inc({ kind: 'credential' }, credentials);
    for (const item of invalidation) if (item.kind === 'rate_limits' || item.kind === 'profile' || item.kind === 'plan' || item.kind === 'key_quota') metrics.invalidationsReceived.inc({ kind: item.kind });
    // Measured as the message is applied: the cache's listener runs in this same synchronous
    // turn. A clock behind the sender's would make it negative: counted as 0.
    if (publishedAt !== undefined && credentials > 0) metrics.revocationPropagation.observe(Math.max(0, Date.now() - publishedAt) / 1000);
  });
  registerSubscriptionMetric(metrics, () => bus.subscribed);
  return {
    applyLocally(revoked) {
      const credentials = countCredentials(revoked);
      if (credentials > 0) metrics.invalidationsSent.inc(credentials);
      bus.applyLocally(revoked);
    },
    onInvalidation: (listener) => bus.onInvalidation(listener),
    get subscribed() {
      return bus.subscribed;
    },
    onSubscriptionChange: (listener) => bus.onSubscriptionChange(listener),
    close: () => bus.close(),
  };
}

/** How many of the revoked are credentials (not a `rate_limits` or `profile` change, nor a key's creation). */
function countCredentials(revoked: readonly Revoked[]): number {
  let count = 0;
  for (const item of revoked) if ((item.kind === 'api_key' && item.created !== true) || item.kind === 'session') count++;
  return count;
}

/** Allowed decisions are the hot path: their series are bound once. */
function decisionRecorder(metrics: Metrics): DecisionRecorder {
  const allowed = {
    jwt: metrics.authDecisions.bound({ kind: 'jwt', outcome: 'allowed', reason: 'ok' }),
    api_key: metrics.authDecisions.bound({ kind: 'api_key', outcome: 'allowed', reason: 'ok' }),
    issuer_token: metrics.authDecisions.bound({ kind: 'issuer_token', outcome: 'allowed', reason: 'ok' }),
  };
  return (kind, outcome, reason) => {
    if (outcome === 'allowed' && kind !== 'none') allowed[kind].inc();
    else metrics.authDecisions.inc({ kind, outcome, reason });
  };
}
