// Login sessions: a password checked against the organization's hash gives a token; logout revokes it.
import { randomBytes } from 'node:crypto';
import type { PasswordHasher } from '../credentials/passwords.js';
import { sha256Base64url } from '../credentials/digest.js';
import type { TokenService } from '../credentials/jwt.js';
import { Problem } from '../problems.js';
import type { InvalidationBus } from '../store/invalidation.js';
import { shardTagOf, tagged } from '../store/shard-tag.js';
import type { Organization, Store } from '../store/store.js';
import { firstMemberId, type MemberStore } from '../store/members.js';
import type { TenantGrowth } from '../guards/tenant-growth.js';
import { describeClient } from './client-description.js';
import type { NormalizedEmail } from './organizations.js';

export type LoginOutcome = Readonly<{ token: string; orgId: string }>;

/**
 * Whose password was right: the organization, and with `memberId` a member other than its first
 * (issue 50); an organization's own e-mail is its first member, exactly as before members.
 */
export type PasswordHolder = Organization & Readonly<{ memberId?: string; memberEmail?: string }>;

/**
 * How a session is named outside the gateway (listings, DELETE /auth/sessions/:id, the audit
 * trail): a digest of its id, never the id. The id is a login token's `sub`, so handing it to
 * every `keys:read` API key meant that whoever also had the JWT secret could sign a working login
 * token for a live session (issue 26). The handle ends the session through the API and is
 * useless in a token. 22 base64url characters of SHA-256: 132 bits, no collisions to fear.
 */
export function sessionHandle(sessionId: string): string {
  return `ses_${sha256Base64url(`authgate-session-handle:${sessionId}`).slice(0, 22)}`;
}

/**
 * The one answer to a failed login (401 loginFailed, the same for an unknown e-mail and a wrong
 * password) carrying, for the audit trail only, the organization whose e-mail it was: the
 * organization sees attempts on its own account. The client never sees `orgId`.
 */
export class LoginRefused extends Problem {
  readonly orgId: string | undefined;

  constructor(orgId: string | undefined) {
    super('loginFailed', undefined, 'bad_password');
    this.orgId = orgId;
  }
}

/** Who logged in, as the session listing will describe it (services/client-description.ts). */
export type LoginClient = Readonly<{ userAgent: string | undefined; address: string | undefined }>;

/** A live session as its organization sees it: never the token, nor its id (`id` is its handle). */
export type SessionView = Readonly<{ id: string; createdAt: string | null; expiresAt: string; client: string | null; current: boolean }>;

export async function createSessionService(deps: {
  store: Store;
  bus: Pick<InvalidationBus, 'applyLocally'>;
  tokens: TokenService;
  passwords: PasswordHasher;
  now: () => number;
  /** Logins per organization and window, and live sessions per organization (guards/tenant-growth.ts). */
  growth?: Pick<TenantGrowth, 'admitLogin' | 'maxSessions'>;
  /** The members (store/members.ts): their e-mails log in too, and their sessions are linked to them. */
  members?: Pick<MemberStore, 'findMemberByEmail' | 'findMember' | 'linkSessionToMember'>;
}) {
  const { store, bus, tokens, passwords, now, growth, members } = deps;
  const dummyVerify = await passwords.dummyVerifier();

  async function checkPassword(email: NormalizedEmail, password: string): Promise<PasswordHolder> {
    const org = await store.findOrganizationByEmail(email);
    if (org === undefined && members !== undefined) {
      const member = await members.findMemberByEmail(email);
      if (member !== undefined) {
        const valid = await passwords.verify(member.passwordHash, password);
        const ofMember = valid ? await store.findOrganizationById(member.orgId) : undefined;
        if (ofMember === undefined) throw new LoginRefused(member.orgId);
        return { ...ofMember, memberId: member.id, memberEmail: member.email };
      }
    }
    const valid = org === undefined ? await dummyVerify(password) : await passwords.verify(org.passwordHash, password);
    if (!valid || org === undefined) throw new LoginRefused(org?.id);
    // The first member removed (an owner chose so): the organization's own e-mail no longer logs in.
    if (members !== undefined && (await members.findMember(org.id, firstMemberId(org.id))) === undefined) throw new LoginRefused(org.id);
    return org;
  }

  /** The session of a login whose password was right; its token. */
  async function openSession(orgId: string, client?: LoginClient, memberId?: string): Promise<string> {
    // Counted only once the password is right: nobody else can spend an organization's logins.
    await growth?.admitLogin(orgId);
    // `<shard tag>.<128 random bits>`: the tag routes the session to its organization's shard.
    const sessionId = tagged(shardTagOf(orgId), randomBytes(16).toString('base64url'));
    const { token, expiresAtMs } = await tokens.sign(sessionId, now());
    // The link first: a session without one is its organization's first member's (store/members.ts).
    if (memberId !== undefined && memberId !== firstMemberId(orgId)) await members?.linkSessionToMember(orgId, sessionId, memberId, expiresAtMs - now());
    const created = await store.createSession({
      id: sessionId,
      orgId,
      expiresAt: expiresAtMs,
      createdAt: now(),
      ...(client !== undefined && { client: describeClient(client.userAgent, client.address) }),
    }, growth?.maxSessions);
    if (created === 'limit-reached') {
      throw new Problem('sessionLimitReached', `This organization has ${growth?.maxSessions ?? 0} live sessions: end one (DELETE /auth/sessions/{id}) or wait for one to expire.`, 'session_limit');
    }
    // The organization was deleted between the read and the write.
    if (created === 'no-organization') throw new LoginRefused(undefined);
    return token;
  }

  return {
    /** Same 401 for an unknown e-mail and a wrong password, in comparable time. */
    async login(email: NormalizedEmail, password: string, client?: LoginClient): Promise<LoginOutcome> {
      const org = await checkPassword(email, password);
      return { token: await openSession(org.id, client, org.memberId), orgId: org.id };
    },

    /** The organization whose password this is (the first half of login): LoginRefused otherwise. */
    checkPassword,

    /**
     * A new session for an organization whose password was just checked (POST /auth/password):
     * counted and limited as a login.
     */
    open: openSession,

    async logout(sessionId: string): Promise<void> {
      const revoked = await store.deleteSession(sessionId);
      if (revoked !== undefined) bus.applyLocally([revoked]);
    },

    /** The organization's live sessions, the latest login first; `current` marks the caller's own. */
    async list(orgId: string, callerSessionId?: string): Promise<SessionView[]> {
      return (await store.listSessions(orgId)).map((session) => ({
        id: sessionHandle(session.id),
        createdAt: session.createdAt === undefined ? null : new Date(session.createdAt).toISOString(),
        expiresAt: new Date(session.expiresAt).toISOString(),
        client: session.client ?? null,
        current: session.id === callerSessionId,
      }));
    },

    /** Ends one of the organization's sessions: its token is 401 at once, on every replica. 404 otherwise. */
    async end(orgId: string, handle: string): Promise<void> {
      // The organization's own sessions only, so another's handle is not found either.
      const session = (await store.listSessions(orgId)).find((listed) => sessionHandle(listed.id) === handle);
      const revoked = session === undefined ? undefined : await store.deleteSessionIfOwned(orgId, session.id);
      if (revoked === undefined) throw new Problem('sessionNotFound');
      bus.applyLocally([revoked]);
    },

    /** Ends every session of the organization (API keys stay); how many there were. */
    async endAll(orgId: string): Promise<number> {
      const revoked = await store.deleteAllSessions(orgId);
      bus.applyLocally(revoked);
      return revoked.length;
    },
  };
}

export type SessionService = Awaited<ReturnType<typeof createSessionService>>;
