// The audit trail's writer: security events recorded off the request path, in batches.
import type { Logger } from '../observability/logging.js';
import { sha256Base64url } from '../credentials/digest.js';
import type { CredentialKind } from '../credentials/decisions.js';
import { addressPrefix } from '../services/client-description.js';
import { sessionHandle } from '../services/sessions.js';
import type { AuditEvent, AuditRetention, AuditStore } from '../store/audit.js';
import { firstMemberId } from '../store/members.js';

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
}): AuditTrail {
  let queue: AuditEvent[] = [];
  let writing: Promise<void> | undefined;
  let scheduled = false;

  async function writeQueued(): Promise<void> {
    while (queue.length > 0) {
      const batch = queue;
      queue = [];
      try {
        await deps.store.appendAuditEvents(batch, deps.retention);
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
 */
export function actorOf(request: { principal: { via: CredentialKind; credentialId: string } | null; ip?: string | undefined; member?: { id: string; orgId: string; email: string } | undefined }): Pick<AuditEvent, 'actor' | 'credential' | 'network' | 'member'> {
  const network = addressPrefix(request.ip);
  if (request.principal === null) return { actor: 'anonymous', network };
  const { via, credentialId } = request.principal;
  // The member who acted (issue 50), where it is one other than the organization's first.
  const member = request.member === undefined || request.member.id === firstMemberId(request.member.orgId) ? undefined : { id: request.member.id, email: request.member.email };
  return { actor: 'organization', credential: { kind: via, id: via === 'jwt' ? sessionHandle(credentialId) : credentialId }, network, ...(member !== undefined && { member }) };
}

/** An e-mail as the trail may name it: 16 base64url characters of its SHA-256, never the address. */
export function emailDigest(email: string): string {
  return sha256Base64url(email).slice(0, 16);
}
