// What a security notice says and how it is signed: the body, its HMAC, the headers (issue 31).
import { createHmac } from 'node:crypto';
import type { NoticeExtras } from '../audit/trail.js';
import type { AuditEvent } from '../store/audit.js';
import type { ConcernedRef, NoticeMember } from './member-concerned.js';

/**
 * The audit events that also go out as a notice: every change to an organization's credentials or
 * to where it is reached (NIST SP 800-63B-4 §4.6: tell the subscriber of each authenticator change,
 * out of band), and a key revoked because it was reported leaked. docs/operations.md lists them;
 * a later security change adds its type here and there.
 */
export const NOTICED_TYPES: ReadonlySet<string> = new Set([
  'password.changed',
  'password.reset',
  'password.reset_issued',
  'organization.name_changed',
  'organization.email_changed',
  'api_key.leaked',
  // Every change to the second factor (issue 45): the organization's, and the operator's removal.
  'mfa.totp_enabled',
  'mfa.totp_disabled',
  'mfa.passkey_added',
  'mfa.passkey_removed',
  'mfa.recovery_codes_regenerated',
  'mfa.recovery_code_used',
  'mfa.removed',
  // What the organization's credentials may do (issue 47): a move to another plan.
  'organization.plan_changed',
  // Members (issue 50): an invitation, whose token the operator's mailer delivers.
  'member.invited',
]);

/** An event to notify, as the trail took it: without the organization, which is read at send time. */
export type NoticeSource = Readonly<{
  /** The delivery's id: the same on every attempt, so a receiver can drop repeats. */
  id: string;
  event: AuditEvent & Readonly<{ orgId: string }>;
  extras: NoticeExtras | undefined;
  /** The member it concerns (member-concerned.ts), read when it is sent; none for the organization itself. */
  concerns?: ConcernedRef | undefined;
}>;

/** The organization as the store holds it when the notice is sent; null fields once it is gone. */
export type NoticeOrganization = Readonly<{ id: string; name: string | null; email: string | null }>;

/** The JSON body, field by field (docs/operations.md shows one). */
export type NoticeBody = Readonly<{
  id: string;
  type: string;
  /** When the event happened (ISO 8601). */
  occurredAt: string;
  /** When this attempt was sent, in Unix seconds: the X-Authgate-Timestamp header, covered by the signature. */
  sentAt: number;
  organization: NoticeOrganization;
  /** The member it concerns (issue 50), as the store holds it when sent; null when it concerns no person. */
  member: NoticeMember | null;
  actor: AuditEvent['actor'];
  network: string | null;
  details: NonNullable<AuditEvent['details']>;
  /** Only for organization.email_changed: the address it left, where the organization may read this. */
  previousEmail?: string;
  /** Only for member.invited: whom to send it to, and the invitation's token (shown once to the inviter, and here). */
  invitation?: NonNullable<NoticeExtras['invitation']>;
}>;

export function noticeBody(source: NoticeSource, organization: NoticeOrganization, sentAtSeconds: number, member: NoticeMember | null = null): NoticeBody {
  const { event, extras } = source;
  return {
    id: source.id,
    type: event.type,
    occurredAt: new Date(event.at).toISOString(),
    sentAt: sentAtSeconds,
    organization,
    member,
    actor: event.actor,
    network: event.network ?? null,
    // The audit entry's details, which by the trail's contract hold ids, counts and reasons, never a secret.
    details: event.details ?? {},
    ...(event.type === 'organization.email_changed' && extras?.previousEmail !== undefined && { previousEmail: extras.previousEmail }),
    ...(event.type === 'member.invited' && extras?.invitation !== undefined && { invitation: extras.invitation }),
  };
}

export const SIGNATURE_HEADER = 'x-authgate-signature';
export const DELIVERY_HEADER = 'x-authgate-delivery';
export const TIMESTAMP_HEADER = 'x-authgate-timestamp';

/** `sha256=` and the hex HMAC-SHA256 of the exact bytes sent, keyed with the webhook secret. */
export function signature(rawBody: string | Buffer, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`;
}

/** The serialized body and the headers of one attempt. */
export function signedNotice(body: NoticeBody, secret: string): { raw: string; headers: Record<string, string> } {
  const raw = JSON.stringify(body);
  return {
    raw,
    headers: {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(raw)),
      'user-agent': 'authgate-notices/1',
      [SIGNATURE_HEADER]: signature(raw, secret),
      [DELIVERY_HEADER]: body.id,
      [TIMESTAMP_HEADER]: String(body.sentAt),
    },
  };
}
