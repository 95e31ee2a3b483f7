// Login sessions: a password checked against the organization's hash gives a token; logout revokes it.
import { randomBytes } from 'node:crypto';
import type { PasswordHasher } from '../credentials/passwords.js';
import type { TokenService } from '../credentials/jwt.js';
import { Problem } from '../problems.js';
import type { InvalidationBus } from '../store/invalidation.js';
import { shardTagOf, tagged } from '../store/shard-tag.js';
import type { Store } from '../store/store.js';
import type { NormalizedEmail } from './organizations.js';

export type LoginOutcome = Readonly<{ token: string; orgId: string }>;

export async function createSessionService(deps: {
  store: Store;
  bus: Pick<InvalidationBus, 'applyLocally'>;
  tokens: TokenService;
  passwords: PasswordHasher;
  now: () => number;
}) {
  const { store, bus, tokens, passwords, now } = deps;
  const dummyVerify = await passwords.dummyVerifier();

  return {
    /** Same 401 for an unknown e-mail and a wrong password, in comparable time. */
    async login(email: NormalizedEmail, password: string): Promise<LoginOutcome> {
      const org = await store.findOrganizationByEmail(email);
      const valid = org === undefined ? await dummyVerify(password) : await passwords.verify(org.passwordHash, password);
      if (!valid || org === undefined) throw new Problem('loginFailed', undefined, 'bad_password');
      // `<shard tag>.<128 random bits>`: the tag routes the session to its organization's shard.
      const sessionId = tagged(shardTagOf(org.id), randomBytes(16).toString('base64url'));
      const { token, expiresAtMs } = await tokens.sign(sessionId, now());
      const created = await store.createSession({ id: sessionId, orgId: org.id, expiresAt: expiresAtMs });
      // The organization was deleted between the read and the write.
      if (created === 'no-organization') throw new Problem('loginFailed', undefined, 'bad_password');
      return { token, orgId: org.id };
    },

    async logout(sessionId: string): Promise<void> {
      const revoked = await store.deleteSession(sessionId);
      if (revoked !== undefined) bus.applyLocally([revoked]);
    },
  };
}

export type SessionService = Awaited<ReturnType<typeof createSessionService>>;
