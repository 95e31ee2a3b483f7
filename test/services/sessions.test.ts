import t, { type Test } from 'tap';
import { createTokenService } from '../../src/credentials/jwt.js';
import { createPasswordHasher } from '../../src/credentials/passwords.js';
import { Problem } from '../../src/problems.js';
import { normalizeEmail } from '../../src/services/organizations.js';
import { createSessionService } from '../../src/services/sessions.js';
import { createMemoryStore } from '../../src/store/memory-store.js';
import { shardTagIn, shardTagOf } from '../../src/store/shard-tag.js';
import type { Revoked, Store } from '../../src/store/store.js';

/** The error a promise rejects with (undefined if it resolves). */
const caught = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error);

/** services/sessions.ts over the memory store: what login and logout leave in the store and announce. */

const NOW = Date.parse('2026-01-01T00:00:00Z');
const PASSWORD = 'sessions-service-password';
const passwords = createPasswordHasher();

async function fixture(t: Test, wrap: (store: Store) => Store = (store) => store) {
  const memory = createMemoryStore({ now: () => NOW });
  t.teardown(() => memory.close());
  await memory.createOrganizationIfEmailFree({ id: 'org_s', name: 'Org', email: 'owner@example.test', passwordHash: await passwords.hash(PASSWORD), createdAt: new Date(NOW).toISOString() });
  const announced: Revoked[][] = [];
  const tokens = await createTokenService({ secret: 'sessions-test-secret-0123456789abcdef', previousSecrets: [], issuer: 'authgate', ttlSeconds: 3600, environment: 'sandbox' });
  const sessions = await createSessionService({ store: wrap(memory), bus: { applyLocally: (revoked) => announced.push([...revoked]) }, tokens, passwords, now: () => NOW });
  return { memory, tokens, sessions, announced };
}

t.test('login: a token whose session is stored for the organization, expiring with the token', async (t) => {
  const { memory, tokens, sessions } = await fixture(t);
  const { token, orgId } = await sessions.login(normalizeEmail('  OWNER@Example.TEST'), PASSWORD);
  t.equal(orgId, 'org_s');
  const verified = await tokens.verify(token, NOW);
  if (!verified.ok) throw new Error('the token does not verify');
  t.equal(verified.expiresAtMs, NOW + 3600_000);
  // `<shard tag>.<128 random bits>`: the organization's tag routes the session to its shard.
  t.match(verified.sessionId, new RegExp(`^${shardTagOf('org_s')}\\.[A-Za-z0-9_-]{22}$`), 'the session id carries its organization\'s shard tag');
  t.equal(shardTagIn(verified.sessionId), shardTagOf('org_s'));
  const session = await memory.findSession(verified.sessionId);
  t.match(session, { id: verified.sessionId, orgId: 'org_s', expiresAt: verified.expiresAtMs });
  const again = await sessions.login(normalizeEmail('owner@example.test'), PASSWORD);
  t.not(again.token, token, 'each login is a new session');
});

t.test('login: a wrong password and an unknown e-mail are the same problem, and store nothing', async (t) => {
  const created: string[] = [];
  const { sessions } = await fixture(t, (store) => ({ ...store, createSession: (session) => (created.push(session.id), store.createSession(session)) }));
  for (const [email, password] of [['owner@example.test', 'wrong-password'], ['nobody@example.test', PASSWORD]] as const) {
    const error = await sessions.login(normalizeEmail(email), password).catch((e: unknown) => e);
    t.type(error, Problem);
    t.match(error, { problem: 'loginFailed', reason: 'bad_password', detail: undefined }, `${email}: loginFailed`);
  }
  t.same(created, [], 'no session was stored');
});

t.test('login: an organization deleted between the password check and the session write is a failed login', async (t) => {
  const { sessions } = await fixture(t, (store) => ({
    ...store,
    createSession: async (session) => {
      await store.deleteOrganization(session.orgId);
      return store.createSession(session);
    },
  }));
  t.match(await caught(sessions.login(normalizeEmail('owner@example.test'), PASSWORD)), { problem: 'loginFailed' });
});

t.test('logout: the session is deleted and announced once; an unknown one announces nothing', async (t) => {
  const { memory, tokens, sessions, announced } = await fixture(t);
  const { token } = await sessions.login(normalizeEmail('owner@example.test'), PASSWORD);
  const verified = await tokens.verify(token, NOW);
  if (!verified.ok) throw new Error('the token does not verify');
  await sessions.logout(verified.sessionId);
  t.equal(await memory.findSession(verified.sessionId), undefined, 'gone from the store');
  t.equal(announced.length, 1);
  t.equal(announced[0]?.length, 1);
  t.equal(announced[0]?.[0]?.kind, 'session');
  await sessions.logout(verified.sessionId);
  await sessions.logout('never-existed');
  t.equal(announced.length, 1, 'nothing more announced');
});
