import { LEGACY_SCOPES } from '../../src/authz/scopes.js';
import { liveTable } from '../helpers/route-tables.js';
import t, { type Test } from 'tap';
import { parseApiKey } from '../../src/credentials/api-keys.js';
import { Problem } from '../../src/problems.js';
import { createApiKeyService } from '../../src/services/api-keys.js';
import { createMemoryStore } from '../../src/store/memory-store.js';
import { rateLimitServiceOver } from '../helpers/rate-limits.js';
import { shardTagIn, shardTagOf } from '../../src/store/shard-tag.js';
import type { Revoked } from '../../src/store/store.js';

/** The error a promise rejects with (undefined if it resolves). */
const caught = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error);

/** services/api-keys.ts over the memory store: what create, list and revoke store and announce. */

const NOW = Date.parse('2026-02-03T04:05:06Z');

async function fixture(t: Test) {
  const store = createMemoryStore({ now: () => NOW });
  t.teardown(() => store.close());
  for (const id of ['org_a', 'org_b']) {
    await store.createOrganizationIfEmailFree({ id, name: id, email: `${id}@example.test`, passwordHash: 'x', createdAt: new Date(NOW).toISOString() });
  }
  const announced: Revoked[][] = [];
  const rateLimits = await rateLimitServiceOver(store);
  const apiKeys = createApiKeyService({ store, bus: { applyLocally: (revoked) => announced.push([...revoked]) }, environment: 'production', now: () => NOW, rateLimits, routes: liveTable() });
  return { store, apiKeys, announced };
}

t.test('create: the secret is returned once; the store holds its hash, under the organization', async (t) => {
  const { store, apiKeys } = await fixture(t);
  const created = await apiKeys.create('org_a');
  t.match(created.apiKey, /^agk_live_/, 'a production key');
  t.match(created.apiKey, new RegExp(`^agk_live_${shardTagOf('org_a')}_`), 'carrying its organization\'s shard tag');
  t.match(created.id, /^key_/);
  const parsed = parseApiKey(created.apiKey);
  if (!parsed.ok) throw new Error('the key does not parse');
  t.equal(shardTagIn(parsed.hash), shardTagOf('org_a'), 'its lookup hash carries the tag too');
  const record = await store.findApiKeyByHash(parsed.hash);
  t.same(record, { id: created.id, orgId: 'org_a', hash: parsed.hash }, 'found by its hash, for its organization');
  const [summary, ...others] = await store.listApiKeys('org_a');
  t.same(others, []);
  t.match(summary, { id: created.id, createdAt: new Date(NOW).toISOString() });
  t.notOk(JSON.stringify([record, summary]).includes(created.apiKey), 'the record does not hold the secret');
  t.ok(created.apiKey.startsWith(summary!.displayPrefix), 'the display prefix is the start of the key');
});

t.test('create for an organization that no longer exists: the credential is refused, nothing is stored', async (t) => {
  const { store, apiKeys } = await fixture(t);
  const error = await apiKeys.create('org_gone').catch((e: unknown) => e);
  t.type(error, Problem);
  t.match(error, { problem: 'credentialInvalid', reason: 'revoked_token' });
  t.same(await store.listApiKeys('org_gone'), []);
});

t.test('list: views of the organization\'s own keys, never a hash', async (t) => {
  const { apiKeys } = await fixture(t);
  const a1 = await apiKeys.create('org_a');
  const a2 = await apiKeys.create('org_a');
  await apiKeys.create('org_b');
  const { keys: listed, nextCursor } = await apiKeys.list('org_a');
  t.same(listed.map((key) => key.id).sort(), [a1.id, a2.id].sort());
  t.equal(nextCursor, null, 'one page');
  for (const key of listed) t.same(Object.keys(key).sort(), ['createdAt', 'createdBy', 'expiresAt', 'id', 'lastUsedAt', 'name', 'prefix', 'quota', 'rateLimit', 'scopes']);
  for (const key of listed) t.match(key, { name: null, expiresAt: null, lastUsedAt: null, scopes: [...LEGACY_SCOPES] });
  t.same(await apiKeys.list('org_none'), { keys: [], nextCursor: null });
});

t.test('revoke: its own key is deleted and announced; another organization\'s is apiKeyNotFound and kept', async (t) => {
  const { store, apiKeys, announced } = await fixture(t);
  const a = await apiKeys.create('org_a');
  const b = await apiKeys.create('org_b');
  // Issue 45: a creation is announced too (a replica that remembers the key as unknown forgets it).
  t.same(announced, [a, b].map((key) => { const parsed = parseApiKey(key.apiKey); return [{ kind: 'api_key', cacheKey: parsed.ok ? parsed.hash : '', created: true }]; }), 'each creation announced as created');
  announced.length = 0;
  t.match(await caught(apiKeys.revoke('org_a', b.id)), { problem: 'apiKeyNotFound' });
  t.match(await caught(apiKeys.revoke('org_a', 'key_unknown')), { problem: 'apiKeyNotFound' });
  t.same(announced, [], 'nothing announced for a refusal');
  t.equal((await store.listApiKeys('org_b')).length, 1, 'b\'s key is kept');

  await apiKeys.revoke('org_a', a.id);
  t.same(await store.listApiKeys('org_a'), []);
  const parsed = parseApiKey(a.apiKey);
  t.equal(parsed.ok && (await store.findApiKeyByHash(parsed.hash)), undefined, 'not found by its hash either');
  t.equal(announced.length, 1);
  t.equal(announced[0]?.[0]?.kind, 'api_key');
  t.match(await caught(apiKeys.revoke('org_a', a.id)), { problem: 'apiKeyNotFound' }, 'revoking twice');
});
