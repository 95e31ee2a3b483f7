import t, { type Test } from 'tap';
import { randomBytes } from 'node:crypto';
import { createPasswordPolicy } from '../../src/credentials/password-policy.js';
import { createPasswordHasher } from '../../src/credentials/passwords.js';
import { Problem } from '../../src/problems.js';
import { createOrganizationService, normalizeEmail } from '../../src/services/organizations.js';
import { createMemoryStore } from '../../src/store/memory-store.js';
import { rateLimitServiceOver } from '../helpers/rate-limits.js';
import { shardTagOf, tagged } from '../../src/store/shard-tag.js';
import type { Revoked } from '../../src/store/store.js';

/** The error a promise rejects with (undefined if it resolves). */
const caught = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error);

/** services/organizations.ts over the memory store: create, get and delete, and what each leaves. */

const NOW = Date.parse('2026-03-04T05:06:07Z');
const passwords = createPasswordHasher();

async function fixture(t: Test) {
  const store = createMemoryStore({ now: () => NOW });
  t.teardown(() => store.close());
  const announced: Revoked[][] = [];
  const rateLimits = await rateLimitServiceOver(store);
  const organizations = createOrganizationService({ store, bus: { applyLocally: (revoked) => announced.push([...revoked]) }, passwords, policy: createPasswordPolicy({ minLength: 15 }), now: () => NOW, rateLimits });
  return { store, organizations, announced };
}

t.test('normalizeEmail trims and lower-cases', async (t) => {
  t.equal(normalizeEmail('  Owner@Example.TEST \t'), 'owner@example.test');
});

t.test('create: a view with a fresh id; the store holds an argon2id hash, never the password', async (t) => {
  const { store, organizations } = await fixture(t);
  const view = await organizations.create({ name: '  Acme  ', email: ' Owner@Example.TEST ', password: 'organization-password' });
  t.match(view.id, /^org_[0-9a-f]{32}$/);
  t.same(view, { id: view.id, name: 'Acme', email: 'owner@example.test', createdAt: new Date(NOW).toISOString(), rateLimit: null, effectiveRateLimit: null, keyLimit: null, effectiveKeyLimit: null }, 'name trimmed, e-mail normalized');
  const stored = await store.findOrganizationByEmail('owner@example.test');
  t.equal(stored?.id, view.id);
  t.match(stored?.passwordHash, /^\$argon2id\$/);
  t.notOk(JSON.stringify(stored).includes('organization-password'));
  t.ok(await passwords.verify(stored!.passwordHash, 'organization-password'), 'the hash verifies the password');
  const other = await organizations.create({ name: 'B', email: 'b@example.test', password: 'organization-password' });
  t.not(other.id, view.id);
});

t.test('create with an e-mail already taken, in any case: emailTaken, and the first is kept', async (t) => {
  const { store, organizations } = await fixture(t);
  const first = await organizations.create({ name: 'A', email: 'taken@example.test', password: 'organization-password' });
  const error = await organizations.create({ name: 'B', email: 'TAKEN@example.test', password: 'another-password' }).catch((e: unknown) => e);
  t.type(error, Problem);
  t.match(error, { problem: 'emailTaken' });
  t.notOk((error as Problem).detail?.includes('taken@example.test'), 'the e-mail is not echoed');
  t.equal((await store.findOrganizationByEmail('taken@example.test'))?.id, first.id);
});

t.test('get: the view, never the hash; an unknown id is organizationNotFound', async (t) => {
  const { organizations } = await fixture(t);
  const created = await organizations.create({ name: 'A', email: 'a@example.test', password: 'organization-password' });
  const got = await organizations.get(created.id);
  t.same(got, created);
  t.same(Object.keys(got).sort(), ['createdAt', 'effectiveKeyLimit', 'effectiveRateLimit', 'email', 'id', 'keyLimit', 'name', 'rateLimit']);
  t.match(await caught(organizations.get('org_unknown')), { problem: 'organizationNotFound' });
});

t.test('delete: the organization goes with every key and session, all announced in one step', async (t) => {
  const { store, organizations, announced } = await fixture(t);
  const org = await organizations.create({ name: 'A', email: 'a@example.test', password: 'organization-password' });
  const keep = await organizations.create({ name: 'B', email: 'b@example.test', password: 'organization-password' });
  const createdAt = new Date(NOW).toISOString();
  // Lookup hashes and session ids carry their organization's shard tag, as the services make them.
  const digest = () => randomBytes(16).toString('base64url');
  const [h1, h2, h3] = [tagged(shardTagOf(org.id), digest()), tagged(shardTagOf(org.id), digest()), tagged(shardTagOf(keep.id), digest())];
  const sessionId = tagged(shardTagOf(org.id), digest());
  t.equal(await store.createApiKey({ id: 'key_1', orgId: org.id, hash: h1, displayPrefix: 'agk_test_1', createdAt }), 'created');
  t.equal(await store.createApiKey({ id: 'key_2', orgId: org.id, hash: h2, displayPrefix: 'agk_test_2', createdAt }), 'created');
  t.equal(await store.createApiKey({ id: 'key_3', orgId: keep.id, hash: h3, displayPrefix: 'agk_test_3', createdAt }), 'created');
  t.equal(await store.createSession({ id: sessionId, orgId: org.id, expiresAt: NOW + 60_000 }), 'created');

  t.same(await organizations.delete(org.id), { revoked: 3 });
  t.equal(announced.length, 1, 'one announcement');
  t.same(announced[0]?.map((r) => r.kind).sort(), ['api_key', 'api_key', 'organization', 'session'], 'its keys, its session, and the organization itself (its provider tokens: issue 49)');
  t.equal(await store.findOrganizationById(org.id), undefined);
  t.equal(await store.findOrganizationByEmail('a@example.test'), undefined, 'the e-mail is free again');
  t.equal(await store.findApiKeyByHash(h1), undefined);
  t.equal(await store.findSession(sessionId), undefined);
  t.equal((await store.findApiKeyByHash(h3))?.orgId, keep.id, 'another organization\'s keys are kept');
  t.match(await caught(organizations.delete(org.id)), { problem: 'organizationNotFound' }, 'deleting twice');
  t.equal(announced.length, 1);
});
