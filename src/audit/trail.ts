// The audit trail's writer: security events recorded off the request path, in batches.
import type { Logger } from '../observability/logging.js';
import { sha256Base64url } from '../credentials/digest.js';
import type { CredentialKind } from '../credentials/decisions.js';
import { addressPrefix } from '../services/client-description.js';
import { sessionHandle } from '../services/sessions.js';
import type { AuditActor, AuditEvent, AuditRetention, AuditStore } from '../store/audit.js';
import { firstMemberId } from '../store/members.js';
import { completeActors, type ActorCompletion } from './actor-details.js';

/**
 * What a notice of an event may say beyond the stored event, which names e-mail domains only:
 * the address an e-mail change left, so the operator can tell the organization there.
 */
export type NoticeExtras = Readonly<{
  previousEmail?: string;
  /** member.invited (issue 50): the invitation, its token once, for the operator's mailer to deliver. */
  invitation?: Readonly<{ email: string; role: string; token: string; expiresAt: string }>;
}>;

/**
 * Records security events into the store's audit log without a store round trip on the request:
 * record() queues the event (synchronously, in order) and a write of everything queued goes out
 * on the next turn of the event loop, one at a time, so a burst becomes one append. A write that
 * fails is counted (authgate_audit_write_failures_total) and logged, never retried and never an
 * error for the request: the log line of each event (the other record) is written anyway.
 */
export type AuditTrail = {
  /**
   * `extras` are for the out-of-band notice of the event (notices/, issue 31) only: never
   * stored in the trail, never logged. The trail itself ignores them.
   */
  record(event: Omit<AuditEvent, 'at'>, extras?: NoticeExtras): void;
  /** Writes what is queued (and waits for a write under way): for close() and tests. */
  flush(): Promise<void>;
};

export function createAuditTrail(deps: {
  store: AuditStore;
  retention: AuditRetention;
  now: () => number;
  logger: Pick<Logger, 'warn'>;
  onWriteFailed: (events: number) => void;
  /** Completes the actors of a batch before it is written (actor-details.ts). */
  completeActors?: ActorCompletion;
}): AuditTrail {
  let queue: AuditEvent[] = [];
  let writing: Promise<void> | undefined;
  let scheduled = false;

  async function writeQueued(): Promise<void> {
    while (queue.length > 0) {
      const batch = queue;
      queue = [];
      try {
        await deps.store.appendAuditEvents(deps.completeActors === undefined ? batch : await completeActors(batch, deps.completeActors), deps.retention);
      } catch (error) {
        deps.onWriteFailed(batch.length);
        deps.logger.warn({ event: 'audit_write_failed', events: batch.length, error: (error as Error).message }, 'audit events not written');
      }
    }
  }

  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      if (writing === undefined) writing = writeQueued().finally(() => (writing = undefined));
    });
  }

  return {
    record(event) {
      queue.push({ ...event, at: deps.now() });
      schedule();
    },
    async flush() {
      while (writing !== undefined || queue.length > 0) {
        if (writing === undefined) writing = writeQueued().finally(() => (writing = undefined));
        await writing;
      }
    },
  };
}

/**
 * Who acted, as the audit entry names them: the request's credential and its network, never a
 * secret. A login token's credential is its session's `ses_…` handle (the one GET /auth/sessions
 * shows), never the session id the token is signed over (issue 45): with the JWT secret, that id
 * is a working token for a live session, and the trail is read by every `audit:read` key.
 * `actorDetail` names the member a login token acts as (the role guard's `request.member`), or
 * the API key (its creator is added when the entry is written: createAuditTrail).
 */
export function actorOf(request: { principal: { via: CredentialKind; credentialId: string } | null; ip?: string | undefined; member?: { id: string; orgId: string; email: string } | undefined }): Pick<AuditEvent, 'actor' | 'credential' | 'network' | 'member' | 'actorDetail'> {
  const network = addressPrefix(request.ip);
  if (request.principal === null) return { actor: 'anonymous', network, actorDetail: ANONYMOUS };
  const { via, credentialId } = request.principal;
  // The member who acted (issue 50), where it is one other than the organization's first.
  const member = request.member === undefined || request.member.id === firstMemberId(request.member.orgId) ? undefined : { id: request.member.id, email: request.member.email };
  const actorDetail: AuditActor | undefined =
    via === 'api_key' ? { type: 'api_key', id: credentialId }
    : via === 'issuer_token' ? { type: 'issuer_token', id: credentialId }
    : request.member === undefined ? undefined
    : memberActor(request.member);
  return { actor: 'organization', credential: { kind: via, id: via === 'jwt' ? sessionHandle(credentialId) : credentialId }, network, ...(member !== undefined && { member }), ...(actorDetail !== undefined && { actorDetail }) };
}

/** A member as an entry's actor. */
export function memberActor(member: { id: string; email: string }): AuditActor {
  return { type: 'member', id: member.id, email: member.email };
}

/**
 * The member who acted on a request of no credential (a login, an invitation accepted): both the
 * `member` of before (only for one other than the first) and `actorDetail`.
 */
export function actingMember(orgId: string, member: { id: string; email: string }): Pick<AuditEvent, 'member' | 'actorDetail'> {
  return { ...(member.id !== firstMemberId(orgId) && { member: { id: member.id, email: member.email } }), actorDetail: memberActor(member) };
}

/**
 * A member named by id only, where the request does not hold its e-mail (a password reset): the
 * trail adds the e-mail when it writes the entry (actor-details.ts).
 */
export function memberById(id: string): AuditActor {
  return { type: 'member', id, email: '' };
}

export const ANONYMOUS: AuditActor = { type: 'anonymous' };
/** What the gateway decided on its own: a key revoked on a leak report, a lockout. */
export const GATEWAY: AuditActor = { type: 'gateway' };
export const OPERATOR: AuditActor = { type: 'operator' };

/** An e-mail as the trail may name it: 16 base64url characters of its SHA-256, never the address. */
export function emailDigest(email: string): string {
  return sha256Base64url(email).slice(0, 16);
}
