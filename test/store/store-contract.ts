/**
 * The one contract every Store keeps. memory-store.test.ts and redis-store.test.ts (and the
 * Redis topologies) run it, so the stores cannot drift apart.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import { shardTagOf, tagged } from '../../src/store/shard-tag.js';
import { LEGACY_SCOPES } from '../../src/authz/scopes.js';
import type { AuditEvent, AuditPage } from '../../src/store/audit.js';
import type { RateGrant, RateLease } from '../../src/store/rate-limits.js';
import type { ApiKeyRecord, ApiKeySummary, FoundApiKey, GatewayStore, NewOrganization, Revoked, Session, Store } from '../../src/store/store.js';
import { organizationListingContract } from './organization-listing-contract.js';
import { passwordResetContract } from './password-reset-contract.js';
import { organizationProfileContract } from './organization-profile-contract.js';
import { externalIdContract } from './external-id-contract.js';
import { mfaContract } from './mfa-contract.js';
import { passkeyContract } from './passkey-contract.js';
import { usageContract } from './usage-contract.js';
import { organizationPlanContract } from './organization-plan-contract.js';
import { keyQuotaContract } from './key-quota-contract.js';
import { memberContract } from './member-contract.js';
import { memberCredentialContract } from './member-credential-contract.js';
import { auditMemberContract } from './audit-member-contract.js';

export type ContractStore = { store: GatewayStore; close(): Promise<void> };

function compareIds(a: string, b: string): number {
  const [x, y] = [a.split('-').map(Number), b.split('-').map(Number)];
  return x[0]! !== y[0]! ? x[0]! - y[0]! : x[1]! - y[1]!;
}

export function storeContract(t: Test, makeStore: () => Promise<ContractStore>): void {
  async function open(t: Test): Promise<GatewayStore> {
    const { store, close } = await makeStore();
    t.teardown(close);
    return store;
  }

  organizationListingContract(t, open);
  passwordResetContract(t, open, { newOrganization: () => newOrganization(), newSession: (orgId) => newSession(orgId), pollUntil });
  organizationProfileContract(t, open, { newOrganization: (overrides) => newOrganization(overrides), newSession: (orgId) => newSession(orgId) });
  organizationPlanContract(t, open, { newOrganization: () => newOrganization() });
  keyQuotaContract(t, open);
  mfaContract(t, open, { newOrganization: () => newOrganization() });
  externalIdContract(t, open, () => newOrganization());
  passkeyContract(t, open, { newOrganization: () => newOrganization() });
  usageContract(t, open);
  memberContract(t, open, { newOrganization: (overrides) => newOrganization(overrides) });
  memberCredentialContract(t, open, { newOrganization: () => newOrganization() });
  auditMemberContract(t, open);

  t.test('organizations: create, find, e-mail taken', async (t) => {
    const store = await open(t);
    const org = newOrganization();
    t.strictSame(await store.createOrganizationIfEmailFree(org), org);
    t.strictSame(await store.findOrganizationById(org.id), org);
    t.strictSame(await store.findOrganizationByEmail(org.email), org);

    const rival = newOrganization({ email: org.email });
    t.equal(await store.createOrganizationIfEmailFree(rival), 'email-taken');
    t.equal(await store.findOrganizationById(rival.id), undefined, 'the loser was not stored');
    t.strictSame(await store.findOrganizationByEmail(org.email), org, 'the e-mail still finds the first');

    t.equal(await store.findOrganizationById(randomUUID()), undefined);
    t.equal(await store.findOrganizationByEmail(`${randomUUID()}@example.com`), undefined);
  });

  t.test('api keys: create, find, list (sorted, only the org\'s), delete if owned', async (t) => {
    const store = await open(t);
    const a = await created(store, newOrganization());
    const b = await created(store, newOrganization());
    const later = newApiKey(a.id, '2024-02-01T00:00:00.000Z');
    const earlyY = newApiKey(a.id, '2024-01-01T00:00:00.000Z', 'y-key');
    const earlyX = newApiKey(a.id, '2024-01-01T00:00:00.000Z', 'x-key');
    const ofB = newApiKey(b.id, '2023-01-01T00:00:00.000Z');
    for (const key of [later, earlyY, earlyX, ofB]) t.equal(await store.createApiKey(key), 'created');

    t.strictSame(await store.findApiKeyByHash(later.hash), found(later));
    t.equal(await store.findApiKeyByHash(sha()), undefined);
    t.strictSame(await store.listApiKeys(a.id), [later, earlyY, earlyX].map(summary), 'newest first, then by id, descending');
    t.strictSame(await store.listApiKeys(b.id), [summary(ofB)]);
    t.strictSame(await store.listApiKeys(randomUUID()), []);

    t.equal(await store.deleteApiKeyIfOwned(b.id, later.id), undefined, "another org's key");
    t.strictSame(await store.findApiKeyByHash(later.hash), found(later), 'untouched');
    t.strictSame(await store.listApiKeys(a.id), [later, earlyY, earlyX].map(summary), 'still listed');

    t.strictSame(await store.deleteApiKeyIfOwned(a.id, later.id), { kind: 'api_key', cacheKey: later.hash });
    t.equal(await store.findApiKeyByHash(later.hash), undefined);
    t.strictSame(await store.listApiKeys(a.id), [earlyY, earlyX].map(summary));
    t.equal(await store.deleteApiKeyIfOwned(a.id, later.id), undefined, 'only once');
    t.equal(await store.deleteApiKeyIfOwned(a.id, randomUUID()), undefined, 'unknown key id');
  });

  t.test('api keys: a name and an expiry go through create, find and list; keys without them are unchanged', async (t) => {
    const store = await open(t);
    const org = await created(store, newOrganization());
    const plain = newApiKey(org.id, '2024-01-01T00:00:00.000Z');
    const named: ApiKeyRecord = { ...newApiKey(org.id, '2024-01-02T00:00:00.000Z'), name: 'CI deploy key - prod  (eu)' };
    const expiring: ApiKeyRecord = { ...newApiKey(org.id, '2024-01-03T00:00:00.000Z'), expiresAt: Date.parse('2099-01-01T00:00:00.123Z') };
    const both: ApiKeyRecord = { ...newApiKey(org.id, '2024-01-04T00:00:00.000Z'), name: `é ${'ж'.repeat(96)} -`, expiresAt: Date.now() + 60_000 };
    // Stored and found as any other: the reader, not the store, refuses an expired key.
    const expired: ApiKeyRecord = { ...newApiKey(org.id, '2024-01-05T00:00:00.000Z'), name: '-', expiresAt: Date.parse('2024-01-05T00:01:00.000Z') };
    const keys = [plain, named, expiring, both, expired];
    for (const key of keys) t.equal(await store.createApiKey(key), 'created');
    for (const key of keys) t.strictSame(await store.findApiKeyByHash(key.hash), found(key), key.name ?? key.id);
    t.strictSame(await store.findApiKeyByHash(plain.hash), { id: plain.id, orgId: org.id, hash: plain.hash }, 'no expiresAt when there is none');
    t.strictSame(await store.listApiKeys(org.id), [...keys].reverse().map(summary), 'listed with theirs, expired too');
    t.strictSame((await store.listApiKeys(org.id)).at(-1), { id: plain.id, displayPrefix: plain.displayPrefix, createdAt: plain.createdAt }, 'no name or expiresAt when there is none');
    t.strictSame(await store.deleteApiKeyIfOwned(org.id, both.id), { kind: 'api_key', cacheKey: both.hash }, 'deleted by id');
    t.equal(await store.findApiKeyByHash(both.hash), undefined);
    const revoked = await store.deleteOrganization(org.id);
    t.strictSame(sortRevoked(revoked ?? []), sortRevoked([...[plain, named, expiring, expired].map((key): Revoked => ({ kind: 'api_key', cacheKey: key.hash })), { kind: 'organization', cacheKey: org.id }]), 'the organization\'s deletion revokes each');
    for (const key of keys) t.equal(await store.findApiKeyByHash(key.hash), undefined);
  });

  t.test('api keys: find one by id, rename it (changeApiKey), remove its name; nothing else changes', async (t) => {
    const store = await open(t);
    const a = await created(store, newOrganization());
    const b = await created(store, newOrganization());
    const plain = newApiKey(a.id, '2024-01-01T00:00:00.000Z');
    const expiring: ApiKeyRecord = { ...newApiKey(a.id, '2024-01-02T00:00:00.000Z'), expiresAt: Date.parse('2099-01-01T00:00:00.123Z') };
    const both: ApiKeyRecord = { ...newApiKey(a.id, '2024-01-03T00:00:00.000Z'), name: 'old name', expiresAt: Date.parse('2099-02-01T00:00:00.000Z') };
    const ofB: ApiKeyRecord = { ...newApiKey(b.id), name: 'b key' };
    for (const key of [plain, expiring, both, ofB]) t.equal(await store.createApiKey(key), 'created');

    for (const key of [plain, expiring, both]) t.strictSame(await store.findApiKeySummary(a.id, key.id), summary(key), `found: ${key.id}`);
    t.equal(await store.findApiKeySummary(a.id, ofB.id), undefined, "another org's key");
    t.equal(await store.findApiKeySummary(b.id, plain.id), undefined, "nor a's key for b");
    t.equal(await store.findApiKeySummary(a.id, randomUUID()), undefined, 'unknown key id');
    t.equal(await store.findApiKeySummary(a.id, 'key with spaces'), undefined, 'an id no key has');
    t.equal(await store.findApiKeySummary(randomUUID(), plain.id), undefined, 'unknown organization');

    const name = `  Clé «prod» ${'ж'.repeat(10)} - x  `;
    const renamed = [plain, expiring, both].map((key): ApiKeyRecord => ({ ...key, name }));
    for (const key of renamed) {
      t.strictSame(await store.changeApiKey(a.id, key.id, { name }), { key: summary(key), revoked: undefined }, `renamed: ${key.id}`);
      t.strictSame(await store.findApiKeySummary(a.id, key.id), summary(key), 'found renamed');
      t.strictSame(await store.findApiKeyByHash(key.hash), found(key), 'its lookup is untouched');
    }
    t.strictSame(await store.listApiKeys(a.id), [...renamed].reverse().map(summary), 'listed renamed, with the rest as it was');

    t.strictSame(await store.changeApiKey(a.id, both.id, { name: '-' }), { key: summary({ ...both, name: '-' }), revoked: undefined }, 'a name that looks like no expiry');
    const unnamed = [plain, expiring, both].map(({ name: _name, ...key }): ApiKeyRecord => key);
    for (const key of unnamed) {
      t.strictSame(await store.changeApiKey(a.id, key.id, { name: null }), { key: summary(key), revoked: undefined }, `name removed: ${key.id}`);
      t.strictSame(await store.changeApiKey(a.id, key.id, { name: null }), { key: summary(key), revoked: undefined }, 'and again: still none');
      t.strictSame(await store.findApiKeyByHash(key.hash), found(key), 'its lookup is untouched');
    }
    t.strictSame(await store.listApiKeys(a.id), [...unnamed].reverse().map(summary), 'listed without names');

    t.equal(await store.changeApiKey(a.id, ofB.id, { name: 'mine' }), 'not-found', "another org's key");
    t.strictSame(await store.findApiKeySummary(b.id, ofB.id), summary(ofB), 'which keeps its name');
    t.equal(await store.changeApiKey(a.id, randomUUID(), { name: 'x' }), 'not-found', 'unknown key id');
    t.equal(await store.changeApiKey(a.id, 'key with spaces', { name: 'x' }), 'not-found', 'an id no key has');
    t.strictSame(await store.deleteApiKeyIfOwned(a.id, both.id), { kind: 'api_key', cacheKey: both.hash });
    t.equal(await store.changeApiKey(a.id, both.id, { name: 'x' }), 'not-found', 'a deleted key');
    t.equal(await store.findApiKeySummary(a.id, both.id), undefined, 'is not found');
  });

  t.test('api keys: scopes go through create, find and list by name, sorted without duplicates; every scope is kept as no list', async (t) => {
    const store = await open(t);
    const org = await created(store, newOrganization());
    const read: ApiKeyRecord = { ...newApiKey(org.id, '2024-01-01T00:00:00.000Z'), scopes: ['accounts:read'] };
    // The five original names, with an expiry: the longest value they give (64 bytes in Redis: still a listpack entry).
    const five: ApiKeyRecord = { ...newApiKey(org.id, '2024-01-02T00:00:00.000Z'), scopes: [...LEGACY_SCOPES], expiresAt: Date.parse('2099-01-01T00:00:00.000Z') };
    const named: ApiKeyRecord = { ...newApiKey(org.id, '2024-01-03T00:00:00.000Z'), name: 'ci - keys', scopes: ['keys:write', 'keys:read', 'keys:write'], expiresAt: Date.parse('2098-01-01T00:00:00.000Z') };
    // Names of the operator's file, with one of the five among them.
    const operators: ApiKeyRecord = { ...newApiKey(org.id, '2024-01-04T00:00:00.000Z'), scopes: ['reports.monthly:read', 'invoices:write', 'keys:read'] };
    const every: ApiKeyRecord = newApiKey(org.id, '2024-01-05T00:00:00.000Z');
    for (const key of [read, five, named, operators, every]) t.equal(await store.createApiKey(key), 'created');
    t.strictSame(await store.findApiKeyByHash(read.hash), { id: read.id, orgId: org.id, hash: read.hash, scopes: ['accounts:read'] });
    t.strictSame(await store.findApiKeyByHash(five.hash), found(five), 'all five named: exactly those five, not every scope');
    t.strictSame((await store.findApiKeyByHash(five.hash))?.scopes, [...LEGACY_SCOPES].sort());
    t.strictSame((await store.findApiKeyByHash(named.hash))?.scopes, ['keys:read', 'keys:write'], 'sorted, once each');
    t.strictSame((await store.findApiKeyByHash(operators.hash))?.scopes, ['invoices:write', 'keys:read', 'reports.monthly:read']);
    t.strictSame(await store.findApiKeyByHash(every.hash), { id: every.id, orgId: org.id, hash: every.hash }, 'every scope: no list');
    t.strictSame(await store.listApiKeys(org.id), [every, operators, named, five, read].map(summary));
    t.strictSame(await store.findApiKeySummary(org.id, operators.id), summary(operators));
    for (const scopes of [[], ['not a scope'], ['a,b:c'], ['x:y~z'], ['x/y:z'], ['Accounts:read']]) {
      await t.rejects(store.createApiKey({ ...newApiKey(org.id), scopes }), `scopes ${JSON.stringify(scopes)} are refused, never stored`);
    }
    t.equal((await store.listApiKeys(org.id)).length, 5, 'nothing of them stored');
  });

  t.test('api keys: changeApiKey narrows scopes and brings the end closer, refuses to widen, and says when cached copies must go', async (t) => {
    const store = await open(t);
    const org = await created(store, newOrganization());
    const other = await created(store, newOrganization());
    const end = Date.parse('2099-01-01T00:00:00.000Z');
    const key: ApiKeyRecord = { ...newApiKey(org.id), name: 'svc' };
    const expiring: ApiKeyRecord = { ...newApiKey(org.id), scopes: ['accounts:read', 'keys:read'], expiresAt: end };
    for (const k of [key, expiring]) t.equal(await store.createApiKey(k), 'created');
    const revokes = (k: ApiKeyRecord) => ({ kind: 'api_key', cacheKey: k.hash });

    const narrowed: ApiKeyRecord = { ...key, scopes: ['accounts:read', 'accounts:write'] };
    t.strictSame(await store.changeApiKey(org.id, key.id, { scopes: narrowed.scopes! }), { key: summary(narrowed), revoked: revokes(key) }, 'narrowed: its cached copies go');
    t.strictSame(await store.findApiKeyByHash(key.hash), found(narrowed), 'the hot path reads the narrower set');
    t.equal(await store.changeApiKey(org.id, key.id, { scopes: ['accounts:read', 'keys:read'] }), 'scopes-wider', 'one it does not hold');
    t.equal(await store.changeApiKey(org.id, key.id, { scopes: ['accounts:read', 'invoices:read'] }), 'scopes-wider', 'a name of the file it does not hold');
    t.equal(await store.changeApiKey(org.id, key.id, { scopes: [...LEGACY_SCOPES], name: 'x' }), 'scopes-wider', 'every scope again');
    t.strictSame(await store.findApiKeySummary(org.id, key.id), summary(narrowed), 'a refused change changes nothing, its name neither');
    t.strictSame(await store.changeApiKey(org.id, key.id, { scopes: narrowed.scopes! }), { key: summary(narrowed), revoked: undefined }, 'the same set: nothing to drop');

    const ends: ApiKeyRecord = { ...narrowed, expiresAt: end };
    t.strictSame(await store.changeApiKey(org.id, key.id, { expiresAt: end }), { key: summary(ends), revoked: revokes(key) }, 'a key without an end may be given one');
    t.equal(await store.changeApiKey(org.id, key.id, { expiresAt: end + 1 }), 'expiry-later', 'never later');
    const sooner: ApiKeyRecord = { ...ends, expiresAt: end - 60_000, name: 'svc2' };
    t.strictSame(await store.changeApiKey(org.id, key.id, { expiresAt: end - 60_000, name: 'svc2' }), { key: summary(sooner), revoked: revokes(key) }, 'sooner, renamed at once');
    t.strictSame(await store.findApiKeyByHash(key.hash), found(sooner));

    const both: ApiKeyRecord = { ...expiring, scopes: ['keys:read'], expiresAt: end - 1 };
    t.strictSame(await store.changeApiKey(org.id, expiring.id, { scopes: both.scopes!, expiresAt: end - 1 }), { key: summary(both), revoked: revokes(expiring) });
    t.strictSame(await store.listApiKeys(org.id).then((keys) => keys.map((k) => k.id).sort()), [key.id, expiring.id].sort());
    t.equal(await store.changeApiKey(other.id, key.id, { name: 'mine' }), 'not-found', "another org's key");
    t.equal(await store.changeApiKey(org.id, randomUUID(), { scopes: ['accounts:read'] }), 'not-found');

    // The operator's names, and between them and the five original ones, both ways.
    const mixed: ApiKeyRecord = { ...newApiKey(org.id), scopes: ['invoices:read', 'keys:read', 'old:gone', 'reports:read'] };
    t.equal(await store.createApiKey(mixed), 'created');
    t.equal(await store.changeApiKey(org.id, mixed.id, { scopes: ['invoices:write'] }), 'scopes-wider', 'a name it does not hold');
    t.equal(await store.changeApiKey(org.id, mixed.id, { scopes: ['keys:write'] }), 'scopes-wider', 'one of the five it does not hold');
    const fewer: ApiKeyRecord = { ...mixed, scopes: ['invoices:read', 'keys:read', 'old:gone'] };
    t.strictSame(await store.changeApiKey(org.id, mixed.id, { scopes: ['old:gone', 'invoices:read', 'keys:read'] }), { key: summary(fewer), revoked: revokes(mixed) }, 'narrowed by name, in any order');
    t.strictSame(await store.changeApiKey(org.id, mixed.id, { scopes: ['keys:read', 'invoices:read', 'old:gone'] }), { key: summary(fewer), revoked: undefined }, 'the same names: nothing to drop');
    const onlyKeys: ApiKeyRecord = { ...mixed, scopes: ['keys:read'] };
    t.strictSame(await store.changeApiKey(org.id, mixed.id, { scopes: ['keys:read'] }), { key: summary(onlyKeys), revoked: revokes(mixed) }, 'down to one of the five');
    t.equal(await store.changeApiKey(org.id, mixed.id, { scopes: ['invoices:read'] }), 'scopes-wider', 'a name it held before');
    t.strictSame(await store.findApiKeyByHash(mixed.hash), found(onlyKeys));
  });

  t.test('api keys: parallel narrowings never widen a key: it ends inside every change that was applied', async (t) => {
    const store = await open(t);
    const org = await created(store, newOrganization());
    const key = newApiKey(org.id);
    t.equal(await store.createApiKey(key), 'created');
    // Subsets of six names (the five original ones and one of a file), so both encodings meet.
    const pool = [...LEGACY_SCOPES, 'invoices:read'];
    const subsets = Array.from({ length: 24 }, (_, i) => pool.filter((_name, bit) => ((1 + (i * 7) % 63) & (1 << bit)) !== 0));
    const results = await Promise.all(subsets.map((scopes) => store.changeApiKey(org.id, key.id, { scopes })));
    const applied = results.flatMap((result) => (typeof result === 'string' ? [] : [result.key.scopes ?? pool]));
    t.ok(applied.length >= 1, 'at least one applied');
    for (const result of results) t.ok(typeof result !== 'string' || result === 'scopes-wider', 'each applied or refused as wider');
    const final = (await store.findApiKeyByHash(key.hash))?.scopes ?? pool;
    t.strictSame((await store.findApiKeySummary(org.id, key.id))?.scopes ?? pool, final, 'index and hot path agree');
    for (const scopes of applied) t.ok(final.every((name) => scopes.includes(name)), `the final set ${final.join(' ')} is inside the applied ${scopes.join(' ')}`);
  });

  t.test('api keys: parallel renames and rolls of one key all take effect, one after another; none throws (issue 26)', async (t) => {
    const store = await open(t);
    const org = await created(store, newOrganization());
    const key: ApiKeyRecord = { ...newApiKey(org.id, '2024-01-01T00:00:00.000Z'), scopes: ['accounts:read'] };
    t.equal(await store.createApiKey(key), 'created');
    const names = Array.from({ length: 24 }, (_, i) => `name ${i}`);
    const renamed = await Promise.all(names.map((name) => store.changeApiKey(org.id, key.id, { name })));
    renamed.forEach((result, i) => t.equal(typeof result === 'string' ? result : result.key.name, names[i], `rename ${i} applied`));
    t.ok(names.includes((await store.findApiKeySummary(org.id, key.id))?.name ?? ''), 'the key has one of the names');

    const end = Date.parse('2099-01-01T00:00:00.000Z');
    const successors = names.map((_name, i) => {
      const { orgId: _o, name: _n, scopes: _s, ...successor } = newApiKey(org.id, `2024-02-01T00:00:${String(i).padStart(2, '0')}.000Z`);
      return successor;
    });
    const rolls = await Promise.all(successors.map((successor, i) => store.rollApiKey(org.id, key.id, { successor, rolledKeyEnds: end - i })));
    for (const result of rolls) t.not(result, 'not-found', 'every roll with a grace applied');
    const listed = await store.listApiKeys(org.id);
    t.equal(listed.length, 25, 'each roll wrote its own successor');
    const last = await store.findApiKeySummary(org.id, key.id);
    t.equal(last?.expiresAt, end - 23, 'the rolled key ends at the earliest end given');
    for (const successor of listed.filter((summary) => summary.id !== key.id)) {
      t.match(successor, { name: last?.name, scopes: key.scopes }, 'each successor has the name and scopes');
    }

    const once = newApiKey(org.id);
    t.equal(await store.createApiKey(once), 'created');
    const revoking = await Promise.all(names.map(() => {
      const { orgId: _o, name: _n, scopes: _s, ...successor } = newApiKey(org.id);
      return store.rollApiKey(org.id, once.id, { successor, rolledKeyEnds: 'now' });
    }));
    t.equal(revoking.filter((result) => result !== 'not-found').length, 1, "one roll with 'now' wins, the others find no key");
  });

  t.test('api keys: rollApiKey writes the successor with the name and scopes, ends the rolled key (never later), or deletes it', async (t) => {
    const store = await open(t);
    const org = await created(store, newOrganization());
    const other = await created(store, newOrganization());
    const end = Date.parse('2099-01-01T00:00:00.000Z');
    const rolled: ApiKeyRecord = { ...newApiKey(org.id, '2024-01-01T00:00:00.000Z'), name: 'deploy', scopes: ['invoices:read', 'accounts:read'] };
    t.equal(await store.createApiKey(rolled), 'created');
    await store.recordApiKeyUse([{ orgId: org.id, keyId: rolled.id, at: 1_700_000_000_000 }]);
    const { orgId: _o, name: _n, scopes: _s, ...successorBase } = { ...newApiKey(org.id, '2024-02-01T00:00:00.000Z'), expiresAt: end };
    const result = await store.rollApiKey(org.id, rolled.id, { successor: successorBase, rolledKeyEnds: end - 1000 });
    const successor: ApiKeyRecord = { ...successorBase, orgId: org.id, name: 'deploy', scopes: rolled.scopes! };
    const rolledNow: ApiKeyRecord = { ...rolled, expiresAt: end - 1000 };
    t.strictSame(result, { successor: summary(successor), rolled: used(rolledNow, 1_700_000_000_000), revoked: { kind: 'api_key', cacheKey: rolled.hash } });
    t.strictSame(await store.findApiKeyByHash(successor.hash), found(successor), 'the successor is found');
    t.strictSame(await store.findApiKeyByHash(rolled.hash), found(rolledNow), 'the rolled key ends at its grace');
    t.strictSame(await store.listApiKeys(org.id), [summary(successor), used(rolledNow, 1_700_000_000_000)], 'both listed, the successor first');

    // A second roll of the rolled key with a longer grace does not extend it.
    const { orgId: _o2, name: _n2, scopes: _s2, ...second } = newApiKey(org.id, '2024-03-01T00:00:00.000Z');
    const again = await store.rollApiKey(org.id, rolled.id, { successor: second, rolledKeyEnds: end + 1_000_000 });
    t.equal(typeof again === 'string' ? again : again.rolled?.expiresAt, end - 1000, 'never later than it was');

    const { orgId: _o3, name: _n3, scopes: _s3, ...third } = newApiKey(org.id, '2024-04-01T00:00:00.000Z');
    const now = await store.rollApiKey(org.id, successor.id, { successor: third, rolledKeyEnds: 'now' });
    t.strictSame(typeof now === 'string' ? now : [now.rolled, now.revoked], [undefined, { kind: 'api_key', cacheKey: successor.hash }], "'now' deletes it");
    t.equal(await store.findApiKeyByHash(successor.hash), undefined);
    t.equal(await store.findApiKeySummary(org.id, successor.id), undefined);
    t.strictSame(await store.findApiKeyByHash(third.hash), found({ ...third, orgId: org.id, name: 'deploy', scopes: rolled.scopes! }), 'its successor has the name and scopes still');

    const { orgId: _o4, name: _n4, scopes: _s4, ...fourth } = newApiKey(org.id);
    t.equal(await store.rollApiKey(other.id, rolled.id, { successor: { ...fourth, hash: tagged(shardTagOf(other.id), randomBytes(16).toString('base64url')) }, rolledKeyEnds: 'now' }), 'not-found', "another org's key");
    t.equal(await store.rollApiKey(org.id, successor.id, { successor: fourth, rolledKeyEnds: 'now' }), 'not-found', 'a deleted key');
    t.equal(await store.findApiKeyByHash(fourth.hash), undefined, 'and no successor was written');
  });

  t.test('api keys: pruneExpiredApiKeys drops the keys that ended before the given time, with their use, and no other', async (t) => {
    const store = await open(t);
    const org = await created(store, newOrganization());
    const old: ApiKeyRecord = { ...newApiKey(org.id), name: 'old', expiresAt: 1_000_000 };
    const oldScoped: ApiKeyRecord = { ...newApiKey(org.id), scopes: ['accounts:read'], expiresAt: 2_000_000 };
    const recent: ApiKeyRecord = { ...newApiKey(org.id), expiresAt: 5_000_000 };
    const forever = newApiKey(org.id);
    for (const key of [old, oldScoped, recent, forever]) t.equal(await store.createApiKey(key), 'created');
    await store.recordApiKeyUse([{ orgId: org.id, keyId: old.id, at: 900_000 }]);
    t.equal(await store.pruneExpiredApiKeys(org.id, 3_000_000), 2);
    for (const key of [old, oldScoped]) {
      t.equal(await store.findApiKeyByHash(key.hash), undefined, 'gone from the hot path');
      t.equal(await store.findApiKeySummary(org.id, key.id), undefined, 'and the listing');
    }
    t.strictSame((await store.listApiKeys(org.id)).map((key) => key.id).sort(), [recent.id, forever.id].sort());
    t.equal(await store.pruneExpiredApiKeys(org.id, 3_000_000), 0, 'nothing more');
    t.equal(await store.pruneExpiredApiKeys(randomUUID(), Date.now()), 0, 'an unknown organization');
  });

  t.test('api keys: recordApiKeyUse keeps the latest use, drops uses of keys that are gone', async (t) => {
    const store = await open(t);
    const org = await created(store, newOrganization());
    const other = await created(store, newOrganization());
    const key = newApiKey(org.id);
    const otherKey = newApiKey(other.id);
    for (const k of [key, otherKey]) t.equal(await store.createApiKey(k), 'created');
    await store.recordApiKeyUse([
      { orgId: org.id, keyId: key.id, at: 2_000 },
      { orgId: other.id, keyId: otherKey.id, at: 5_000 },
      { orgId: org.id, keyId: otherKey.id, at: 9_000 }, // not org's key
      { orgId: org.id, keyId: randomUUID(), at: 9_000 },
    ]);
    t.strictSame(await store.findApiKeySummary(org.id, key.id), used(key, 2_000));
    t.strictSame(await store.findApiKeySummary(other.id, otherKey.id), used(otherKey, 5_000), "another org's use went to it alone");
    await store.recordApiKeyUse([{ orgId: org.id, keyId: key.id, at: 1_000 }]);
    t.strictSame(await store.findApiKeySummary(org.id, key.id), used(key, 2_000), 'an older use does not go back in time');
    await store.recordApiKeyUse([{ orgId: org.id, keyId: key.id, at: 3_000 }]);
    t.strictSame(await store.listApiKeys(org.id), [used(key, 3_000)]);
    t.strictSame(await store.findApiKeyByHash(key.hash), found(key), 'the hot path is untouched');

    t.strictSame(await store.deleteApiKeyIfOwned(org.id, key.id), { kind: 'api_key', cacheKey: key.hash });
    await store.recordApiKeyUse([{ orgId: org.id, keyId: key.id, at: 4_000 }]);
    t.strictSame(await store.listApiKeys(org.id), [], 'a deleted key is not brought back by a late use');
    await store.deleteOrganization(other.id);
    await store.recordApiKeyUse([{ orgId: other.id, keyId: otherKey.id, at: 6_000 }]);
    t.equal(await store.findOrganizationById(other.id), undefined, 'nor a deleted organization');
    t.equal(await store.createApiKey(newApiKey(other.id)), 'no-organization', 'whose record stays gone');
  });

  t.test('api keys: an organization that does not exist gets none', async (t) => {
    const store = await open(t);
    const key = newApiKey(randomUUID());
    t.equal(await store.createApiKey(key), 'no-organization');
    t.equal(await store.findApiKeyByHash(key.hash), undefined, 'nothing was stored');
    t.strictSame(await store.listApiKeys(key.orgId), []);
  });

  t.test('sessions: create, find, delete, expire', async (t) => {
    const store = await open(t);
    const org = await created(store, newOrganization());
    const missing = newSession(randomUUID(), 60_000);
    t.equal(await store.createSession(missing), 'no-organization');
    t.equal(await store.findSession(missing.id), undefined);

    const session = newSession(org.id);
    t.equal(await store.createSession(session), 'created');
    t.strictSame(await store.findSession(session.id), session);
    t.strictSame(await store.deleteSession(session.id), { kind: 'session', cacheKey: session.id });
    t.equal(await store.findSession(session.id), undefined);
    t.equal(await store.deleteSession(session.id), undefined, 'only once');
    t.equal(await store.deleteSession(randomUUID()), undefined);

    const brief = newSession(org.id, 2000);
    t.equal(await store.createSession(brief), 'created');
    const found = await store.findSession(brief.id);
    // On a stalled machine the find may only answer after expiresAt; then undefined is right.
    if (Date.now() < brief.expiresAt) t.strictSame(found, brief, 'alive before expiresAt');
    else t.ok(found === undefined || found.id === brief.id, 'found late: gone or still itself');
    const goneAt = await pollUntil(20_000, async () => (await store.findSession(brief.id)) === undefined);
    t.ok(goneAt >= brief.expiresAt - 5, `forgotten at expiresAt, not before (${goneAt - brief.expiresAt} ms)`);
    t.equal(await store.deleteSession(brief.id), undefined, 'an expired session is nothing to revoke');
  });

  t.test('sessions: listed live, the latest login first, with their client; ended one by its owner only, or all at once', async (t) => {
    const store = await open(t);
    const org = await created(store, newOrganization());
    const other = await created(store, newOrganization());
    const t0 = Date.now();
    const first: Session = { ...newSession(org.id), createdAt: t0 - 2000, client: 'curl from 203.0.113.0/24' };
    const second: Session = { ...newSession(org.id), createdAt: t0 - 1000, client: 'Firefox from 2001:db8:1::/48' };
    const bare = newSession(org.id); // stored without login details
    const short: Session = { ...newSession(org.id, 300), createdAt: t0 };
    const theirs: Session = { ...newSession(other.id), createdAt: t0, client: 'x' };
    for (const session of [first, second, bare, short, theirs]) t.equal(await store.createSession(session), 'created');
    const summary = (s: Session) => {
      const { orgId: _org, ...rest } = s;
      return rest;
    };
    t.strictSame(await store.listSessions(org.id), [short, second, first, bare].map(summary), 'the latest login first; one without a time last');
    await pollUntil(20_000, async () => (await store.listSessions(org.id)).length === 3);
    t.strictSame(await store.listSessions(org.id), [second, first, bare].map(summary), 'an expired session is not listed');
    t.match(await store.findSession(first.id), { id: first.id, orgId: org.id, expiresAt: first.expiresAt }, 'found as before (the hot path reads no login details)');

    t.equal(await store.deleteSessionIfOwned(other.id, first.id), undefined, "another organization's session");
    t.ok(await store.findSession(first.id), 'untouched');
    t.strictSame(await store.deleteSessionIfOwned(org.id, first.id), { kind: 'session', cacheKey: first.id });
    t.equal(await store.findSession(first.id), undefined);
    t.equal(await store.deleteSessionIfOwned(org.id, first.id), undefined, 'only once');
    t.strictSame(await store.listSessions(org.id), [second, bare].map(summary));

    const ended = await store.deleteAllSessions(org.id);
    t.strictSame(sortRevoked(ended).filter((r) => r.cacheKey !== short.id), sortRevoked([second, bare].map((s): Revoked => ({ kind: 'session', cacheKey: s.id }))), 'every session of the organization (an expired one may be among them)');
    for (const session of [second, bare]) t.equal(await store.findSession(session.id), undefined);
    t.strictSame(await store.listSessions(org.id), []);
    t.strictSame(await store.deleteAllSessions(org.id), [], 'none left');
    t.ok(await store.findSession(theirs.id), "the other organization's session stays");
    t.strictSame(await store.listSessions(other.id), [summary(theirs)]);
    t.equal(await store.createSession({ ...newSession(org.id), createdAt: t0 }), 'created', 'logging in again works');
    t.equal((await store.listSessions(org.id)).length, 1);
  });

  t.test('audit: appended in order, read newest first, filtered by organization and type, paged, bounded', async (t) => {
    const store = await open(t);
    const retention = { maxEvents: 10_000, maxAgeMs: 3_600_000 };
    const orgA = `org_${randomBytes(8).toString('hex')}`;
    const orgB = `org_${randomBytes(8).toString('hex')}`;
    const event = (i: number): AuditEvent => ({
      type: i % 3 === 0 ? 'api_key.created' : 'login.succeeded',
      at: Date.now(),
      orgId: i % 2 === 0 ? orgA : orgB,
      actor: 'organization',
      credential: { kind: 'jwt', id: `sess_${i}` },
      network: '203.0.113.0/24',
      details: { n: i, keys: ['a', 'b'], ok: true, none: null },
    });
    const mine = (page: AuditPage) => page.events.filter((e) => e.orgId === orgA || e.orgId === orgB);
    await store.appendAuditEvents(Array.from({ length: 10 }, (_, i) => event(i)), retention);
    await store.appendAuditEvents([event(10), event(11)], retention);
    const all = await store.readAuditEvents({ orgId: orgA, limit: 100 });
    t.same(all.events.map((e) => e.details?.['n']), [10, 8, 6, 4, 2, 0], "org A's, newest first");
    t.equal(all.next, null, 'all of them');
    t.match(all.events[0], { type: 'login.succeeded', orgId: orgA, actor: 'organization', credential: { kind: 'jwt', id: 'sess_10' }, network: '203.0.113.0/24', details: { n: 10, keys: ['a', 'b'], ok: true, none: null }, id: /^\d+-\d+$/ });
    t.same((await store.readAuditEvents({ orgId: orgB, types: ['api_key.created'], limit: 100 })).events.map((e) => e.details?.['n']), [9, 3], 'by type too');

    const pages: number[][] = [];
    let before: string | undefined;
    for (let i = 0; i < 10; i++) {
      const page = await store.readAuditEvents({ orgId: orgA, limit: 4, ...(before !== undefined && { before }) });
      pages.push(page.events.map((e) => Number(e.details?.['n'])));
      if (page.next === null) break;
      before = page.next;
    }
    t.same(pages.flat(), [10, 8, 6, 4, 2, 0], 'pages: each event once, in order');
    t.ok(pages.length >= 2, 'more than one page');
    t.ok(mine(await store.readAuditEvents({ limit: 3 })).length <= 3, 'unfiltered: at most limit');

    // Each organization's trail is bounded on its own: 150 events each, the newest 100 of each kept.
    await store.appendAuditEvents(Array.from({ length: 300 }, (_, i) => event(100 + i)), { maxEvents: 100, maxAgeMs: 3_600_000 });
    const keptA = (await store.readAuditEvents({ orgId: orgA, limit: 1000 })).events;
    const keptB = (await store.readAuditEvents({ orgId: orgB, limit: 1000 })).events;
    t.same([keptA.length, keptA[0]?.details?.['n'], keptA[99]?.details?.['n']], [100, 398, 200], "trimmed to A's newest 100");
    t.same([keptB.length, keptB[0]?.details?.['n'], keptB[99]?.details?.['n']], [100, 399, 201], "and to B's newest 100");
    t.equal(mine(await store.readAuditEvents({ limit: 1000 })).length, 200, 'the admin-wide read has both');
    // Once the clock has moved past them, an age of 0 keeps only what is appended now.
    const lastMs = Number(keptB[0]!.id.split('-')[0]);
    await pollUntil(5_000, () => Date.now() > lastMs + 1);
    await store.appendAuditEvents([event(1000)], { maxEvents: 10_000, maxAgeMs: 0 });
    const young = (await store.readAuditEvents({ orgId: orgA, limit: 1000 })).events;
    t.equal(young.length, 1, 'trimmed by age too');
    t.equal(young[0]?.details?.['n'], 1000);
  });

  t.test("audit: one organization's flood never erases another's events, in its read or the admin-wide one", async (t) => {
    const store = await open(t);
    const retention = { maxEvents: 1000, maxAgeMs: 3_600_000 };
    const victim = `org_${randomBytes(8).toString('hex')}`;
    const flooder = `org_${randomBytes(8).toString('hex')}`;
    const event = (orgId: string | undefined, n: number): AuditEvent => ({ type: 'api_key.changed', at: Date.now(), ...(orgId !== undefined && { orgId }), actor: orgId === undefined ? 'anonymous' : 'organization', details: { n } });
    await store.appendAuditEvents([1, 2, 3].map((n) => event(victim, n)), retention);
    // 1,120 renames, as the attack sent them: in batches, as the trail writes them.
    for (let i = 0; i < 1120; i += 70) await store.appendAuditEvents(Array.from({ length: 70 }, (_, j) => event(flooder, i + j)), retention);
    // And events of no organization (failed logins of unknown e-mails): their own bounded log.
    for (let i = 0; i < 1100; i += 100) await store.appendAuditEvents(Array.from({ length: 100 }, (_, j) => event(undefined, i + j)), retention);

    t.same((await store.readAuditEvents({ orgId: victim, limit: 100 })).events.map((e) => e.details?.['n']), [3, 2, 1], "the victim's trail is whole");
    const flood = (await store.readAuditEvents({ orgId: flooder, limit: 500 })).events;
    t.same([flood.length, flood[0]?.details?.['n']], [500, 1119], "the flooder's own trail is bounded");
    let flooderKept = 0;
    for (let before: string | undefined, page = 0; page < 100; page++) {
      const read = await store.readAuditEvents({ orgId: flooder, limit: 500, ...(before !== undefined && { before }) });
      flooderKept += read.events.length;
      if (read.next === null) break;
      before = read.next;
    }
    t.equal(flooderKept, 1000, "to its own bound: the flooder's oldest went");

    // The admin-wide read, page by page: every event once, newest first, the victim's among them.
    const seen: string[] = [];
    const victims: unknown[] = [];
    let before: string | undefined;
    for (let page = 0; page < 1000; page++) {
      const read = await store.readAuditEvents({ limit: 250, ...(before !== undefined && { before }) });
      for (const e of read.events) {
        seen.push(e.id);
        if (e.orgId === victim) victims.push(e.details?.['n']);
      }
      if (read.next === null) break;
      before = read.next;
    }
    t.same(victims, [3, 2, 1], "the admin sees the victim's events, in order");
    const ordered = seen.every((id, i) => i === 0 || compareIds(seen[i - 1]!, id) >= 0);
    t.ok(ordered, 'newest first across the trails');
    t.equal((await store.readAuditEvents({ orgId: victim, types: ['login.failed'], limit: 10 })).events.length, 0, 'filters still apply');
  });

  t.test('tenant limits: keys and sessions counted in the writing step, under a parallel burst; an own key limit', async (t) => {
    const store = await open(t);
    const org = await created(store, newOrganization());
    const keys = await Promise.all(Array.from({ length: 12 }, () => store.createApiKey(newApiKey(org.id), 5)));
    t.equal(keys.filter((r) => r === 'created').length, 5, 'a burst never overshoots');
    t.ok(keys.every((r) => r === 'created' || r === 'limit-reached'), 'the rest: limit-reached');
    t.equal((await store.listApiKeys(org.id)).length, 5);
    t.equal(await store.createApiKey(newApiKey(org.id)), 'created', 'without a limit, none');
    t.equal(await store.readKeyLimit(org.id), undefined);
    t.equal(await store.setKeyLimit(org.id, 8), true);
    t.equal(await store.readKeyLimit(org.id), 8);
    const more = await Promise.all(Array.from({ length: 5 }, () => store.createApiKey(newApiKey(org.id), 5)));
    t.equal(more.filter((r) => r === 'created').length, 2, 'its own limit wins over the default');
    t.equal(await store.setKeyLimit(org.id, null), true);
    t.equal(await store.readKeyLimit(org.id), undefined, 'removed');
    t.equal(await store.setKeyLimit(`org_${randomBytes(8).toString('hex')}`, 3), false, 'no such organization');
    const sessions = await Promise.all(Array.from({ length: 9 }, () => store.createSession(newSession(org.id), 4)));
    t.equal(sessions.filter((r) => r === 'created').length, 4, 'sessions: never more than the limit');
    t.equal(await store.createSession(newSession(org.id), 4), 'limit-reached');
    const [first] = await store.listSessions(org.id);
    await store.deleteSession(first!.id);
    t.equal(await store.createSession(newSession(org.id), 4), 'created', 'one ended: one more');
    await store.deleteOrganization(org.id);
    t.equal(await store.readKeyLimit(org.id), undefined, 'gone with the organization');
  });

  t.test('deleteOrganization cascades and says what it revoked', async (t) => {
    const store = await open(t);
    const org = await created(store, newOrganization());
    const other = await created(store, newOrganization());
    const keys = [newApiKey(org.id), newApiKey(org.id)];
    const sessions = [0, 1].map(() => newSession(org.id));
    const otherKey = newApiKey(other.id);
    const otherSession = newSession(other.id);
    for (const key of [...keys, otherKey]) await store.createApiKey(key);
    for (const session of [...sessions, otherSession]) await store.createSession(session);

    const revoked = await store.deleteOrganization(org.id);
    t.strictSame(
      sortRevoked(revoked ?? []),
      sortRevoked([
        ...keys.map((key): Revoked => ({ kind: 'api_key', cacheKey: key.hash })),
        ...sessions.map((session): Revoked => ({ kind: 'session', cacheKey: session.id })),
        { kind: 'organization', cacheKey: org.id },
      ]),
    );
    t.equal(await store.findOrganizationById(org.id), undefined);
    t.equal(await store.findOrganizationByEmail(org.email), undefined);
    for (const key of keys) t.equal(await store.findApiKeyByHash(key.hash), undefined);
    for (const session of sessions) t.equal(await store.findSession(session.id), undefined);
    t.strictSame(await store.listApiKeys(org.id), []);
    t.equal(await store.createApiKey(newApiKey(org.id)), 'no-organization');
    t.equal(await store.createSession(newSession(org.id)), 'no-organization');
    t.equal(await store.deleteOrganization(org.id), undefined, 'only once');

    t.strictSame(await store.findOrganizationById(other.id), other, 'the other org is untouched');
    t.strictSame(await store.findApiKeyByHash(otherKey.hash), found(otherKey));
    t.strictSame(await store.findSession(otherSession.id), otherSession);

    const again = newOrganization({ email: org.email });
    t.strictSame(await store.createOrganizationIfEmailFree(again), again, 'the e-mail is free again');
  });

  t.test('parallel creates and deletes leave the listing exact', async (t) => {
    const store = await open(t);
    const org = await created(store, newOrganization());
    const stamps = ['2024-01-01T00:00:00.000Z', '2024-01-02T00:00:00.000Z', '2024-01-03T00:00:00.000Z'];
    const first = Array.from({ length: 25 }, (_, i) => newApiKey(org.id, stamps[i % 3]!));
    await Promise.all(first.map((key) => store.createApiKey(key)));

    const second = Array.from({ length: 50 }, (_, i) => newApiKey(org.id, stamps[i % 3]!));
    const results = await Promise.all([
      ...second.map((key) => store.createApiKey(key)),
      ...first.map((key) => store.deleteApiKeyIfOwned(org.id, key.id)),
    ]);
    t.strictSame(results.slice(0, 50), second.map(() => 'created'));
    t.strictSame(results.slice(50), first.map((key) => ({ kind: 'api_key', cacheKey: key.hash })));

    const expected = second.map(summary).sort((x, y) =>
      x.createdAt === y.createdAt ? (x.id > y.id ? -1 : 1) : x.createdAt > y.createdAt ? -1 : 1,
    );
    t.strictSame(await store.listApiKeys(org.id), expected);
    for (const key of first) t.equal(await store.findApiKeyByHash(key.hash), undefined);
    for (const key of second) t.strictSame(await store.findApiKeyByHash(key.hash), found(key));
  });

  t.test('attempts: counted within limits, a fixed window from the first count, nothing counted when refused', async (t) => {
    const store = await open(t);
    const [a, b, c] = [0, 1, 2].map(() => `test:${randomUUID()}`) as [string, string, string];
    const none = { count: 0, resetInMs: 0 };
    t.strictSame(await store.readCounters([a, b]), [none, none]);
    t.strictSame(await store.readCounters([]), []);
    const attempt = (windowMs = 60_000) => store.countAttempt({ counters: [{ name: a, limit: 3 }, { name: b, limit: 5 }], windowMs });

    const first = await attempt();
    t.strictSame(first, { allowed: true, known: false, counted: [a, b], exhausted: false });
    const states = await store.readCounters([a, b]);
    t.strictSame(states.map((state) => state.count), [1, 1]);
    for (const state of states) t.ok(state.resetInMs > 59_000 && state.resetInMs <= 60_000, `${state.resetInMs} ms left`);
    t.strictSame(await attempt(), { allowed: true, known: false, counted: [a, b], exhausted: false });
    t.strictSame(await attempt(), { allowed: true, known: false, counted: [a, b], exhausted: true }, 'the third took a\'s last');
    const refused = await attempt();
    t.equal(refused.allowed, false, 'a is at its limit');
    if (!refused.allowed) t.ok(refused.retryInMs > 58_000 && refused.retryInMs <= 60_000, `retry in ${refused.retryInMs} ms: a's window, not a new one`);
    t.strictSame((await store.readCounters([a, b])).map((state) => state.count), [3, 3], 'the refused attempt counted on neither');
    t.ok((await store.readCounters([a]))[0]!.resetInMs <= states[0]!.resetInMs, 'the window did not start again');

    t.strictSame(await store.countAttempt({ counters: [{ name: b, limit: 5 }], windowMs: 60_000 }),
      { allowed: true, known: false, counted: [b], exhausted: false }, 'b alone still admits');

    // A short window, and no assertion that two steps fit in it: a loaded machine may take longer.
    t.strictSame(await store.countAttempt({ counters: [{ name: c, limit: 2 }], windowMs: 300 }), { allowed: true, known: false, counted: [c], exhausted: false });
    await pollUntil(20_000, async () => (await store.readCounters([c]))[0]?.count === 0);
    t.strictSame(await store.countAttempt({ counters: [{ name: c, limit: 2 }], windowMs: 60_000 }),
      { allowed: true, known: false, counted: [c], exhausted: false }, 'a new window after expiry');
  });

  t.test('attempts: a parallel burst is admitted exactly up to the limit', async (t) => {
    const store = await open(t);
    const [pair, address] = [`test:${randomUUID()}`, `test:${randomUUID()}`];
    const verdicts = await Promise.all(Array.from({ length: 60 }, () =>
      store.countAttempt({ counters: [{ name: pair, limit: 10 }, { name: address, limit: 100 }], windowMs: 60_000 })));
    t.equal(verdicts.filter((verdict) => verdict.allowed).length, 10, 'exactly 10 of 60 allowed');
    t.equal(verdicts.filter((verdict) => verdict.allowed && verdict.exhausted).length, 1, 'one took the last');
    t.strictSame((await store.readCounters([pair, address])).map((state) => state.count), [10, 10], 'only the allowed ones counted');
  });

  t.test('settling: reset, give back (never below zero, never a new counter)', async (t) => {
    const store = await open(t);
    const [a, b, c] = [0, 1, 2].map(() => `test:${randomUUID()}`) as [string, string, string];
    for (let i = 0; i < 3; i++) await store.countAttempt({ counters: [{ name: a, limit: 10 }, { name: b, limit: 10 }], windowMs: 60_000 });
    await store.settleAttempt({ reset: [a], giveBack: [b, c] });
    t.strictSame((await store.readCounters([a, b, c])).map((state) => state.count), [0, 2, 0], 'a reset, b one less, c not made');
    t.ok((await store.readCounters([b]))[0]!.resetInMs > 0, 'b keeps its window');
    await store.settleAttempt({ giveBack: [b] });
    await store.settleAttempt({ giveBack: [b] });
    await store.settleAttempt({ giveBack: [b] });
    t.strictSame((await store.readCounters([b])).map((state) => state.count), [0], 'never below zero');
    await store.settleAttempt({});
  });

  t.test('known members: exempt counters are skipped, at most max kept, forgotten after the TTL', async (t) => {
    const store = await open(t);
    const [pair, email, set] = [0, 1, 2].map(() => `test:${randomUUID()}`) as [string, string, string];
    const attempt = (member: string, knownTtlMs = 60_000) =>
      store.countAttempt({
        counters: [{ name: pair, limit: 100 }, { name: email, limit: 2, exemptWhenKnown: true }],
        windowMs: 60_000,
        known: { set, member, knownTtlMs },
      });
    // Each on a later millisecond: members remembered within one are equally recent (Redis then
    // orders them by name), and the test wants a strict order.
    const remember = async (member: string, max = 3, ttlMs = 60_000) => {
      const before = Date.now();
      await pollUntil(1_000, () => Date.now() > before);
      await store.settleAttempt({ remember: { set, member, ttlMs, max } });
    };

    t.strictSame(await attempt('192.0.2.1'), { allowed: true, known: false, counted: [pair, email], exhausted: false });
    t.strictSame(await attempt('192.0.2.2'), { allowed: true, known: false, counted: [pair, email], exhausted: true });
    t.equal((await attempt('192.0.2.3')).allowed, false, 'the e-mail counter is spent for unknown members');
    await remember('192.0.2.3');
    t.strictSame(await attempt('192.0.2.3'), { allowed: true, known: true, counted: [pair], exhausted: false },
      'a known member skips the e-mail counter: neither checked nor counted');
    t.strictSame((await store.readCounters([pair, email])).map((state) => state.count), [3, 2]);
    t.equal((await attempt('192.0.2.4')).allowed, false, 'still spent for the others');

    for (const member of ['192.0.2.10', '192.0.2.11', '192.0.2.12']) await remember(member);
    t.equal((await attempt('192.0.2.3')).allowed, false, 'pushed out by three newer: only max are kept');
    t.equal((await attempt('192.0.2.12')).allowed, true, 'the newest is kept');
    await remember('192.0.2.10');
    await remember('192.0.2.13');
    t.equal((await attempt('192.0.2.10')).allowed, true, 'remembering again makes a member the newest');
    t.equal((await attempt('192.0.2.11')).allowed, false, 'so the oldest went instead');

    t.equal((await attempt('192.0.2.13', 0)).allowed, false, 'seen longer ago than knownTtlMs: not known');
    await remember('192.0.2.20', 3, 300);
    await pollUntil(20_000, async () => !(await attempt('192.0.2.20')).allowed);
    t.pass('a set remembered with a short TTL forgets');
  });

  t.test('known members: parallel attempts of a known member are still bounded by their other counters', async (t) => {
    const store = await open(t);
    const [pair, email, set] = [0, 1, 2].map(() => `test:${randomUUID()}`) as [string, string, string];
    await store.settleAttempt({ remember: { set, member: '2001:db8::/64', ttlMs: 60_000, max: 10 } });
    const verdicts = await Promise.all(Array.from({ length: 30 }, () => store.countAttempt({
      counters: [{ name: pair, limit: 10 }, { name: email, limit: 1, exemptWhenKnown: true }],
      windowMs: 60_000,
      known: { set, member: '2001:db8::/64', knownTtlMs: 60_000 },
    })));
    t.equal(verdicts.filter((verdict) => verdict.allowed).length, 10, 'the pair limit holds');
    t.strictSame((await store.readCounters([email])).map((state) => state.count), [0], 'the e-mail counter untouched');
  });

  t.test('credentials carry their organization\'s shard tag: a record with another is refused', async (t) => {
    const store = await open(t);
    const org = await created(store, newOrganization());
    const otherTag = shardTagOf(`${org.id}-other`) === shardTagOf(org.id) ? shardTagOf(`${org.id}-else`) : shardTagOf(`${org.id}-other`);
    const key = { ...newApiKey(org.id), hash: tagged(otherTag, randomBytes(16).toString('base64url')) };
    await t.rejects(store.createApiKey(key), 'a key hash with another tag');
    await t.rejects(store.createApiKey({ ...key, hash: randomBytes(16).toString('base64url') }), 'a key hash without a tag');
    await t.rejects(store.createSession({ ...newSession(org.id), id: tagged(otherTag, 'x') }), 'a session id with another tag');
    t.strictSame(await store.listApiKeys(org.id), [], 'nothing was stored');
    t.equal(await store.findApiKeyByHash(key.hash), undefined);
    t.equal(await store.findApiKeyByHash('64c0ffee'.repeat(8)), undefined, 'a hash of the first format (hex) finds nothing');
    t.equal(await store.findSession(randomUUID()), undefined, 'a session id without a tag finds nothing');
  });

  t.test('ids and times of other shapes than the gateway makes are kept as written', async (t) => {
    const store = await open(t);
    const org = await created(store, newOrganization({ id: randomUUID() }));
    const key = newApiKey(org.id, '2024-01-01T00:00:00Z', `custom-${randomUUID()}`);
    const generated = newApiKey(org.id, '2024-01-01T00:00:00.000Z', `key_${randomBytes(16).toString('hex')}`);
    for (const k of [key, generated]) t.equal(await store.createApiKey(k), 'created');
    t.strictSame(await store.findApiKeyByHash(key.hash), found(key));
    t.strictSame(await store.listApiKeys(org.id), [key, generated].map(summary), 'a time without milliseconds is its own text');
    const session = { ...newSession(org.id), expiresAt: Date.now() + 60_000.5 };
    t.equal(await store.createSession(session), 'created');
    t.strictSame(await store.findSession(session.id), session, 'a fractional expiry too');
    t.strictSame(await store.deleteApiKeyIfOwned(org.id, key.id), { kind: 'api_key', cacheKey: key.hash });
    t.strictSame(sortRevoked((await store.deleteOrganization(org.id)) ?? []),
      sortRevoked([{ kind: 'api_key', cacheKey: generated.hash }, { kind: 'session', cacheKey: session.id }, { kind: 'organization', cacheKey: org.id }]));
  });

  t.test('attempts over counters placed apart (braces): all counted, or none once the refusal returns', async (t) => {
    const store = await open(t);
    const id = randomUUID();
    const [here, there] = [`test:{${id}-here}:x`, `test:{${id}-there}`];
    const attempt = () => store.countAttempt({ counters: [{ name: there, limit: 100 }, { name: here, limit: 1 }], windowMs: 60_000 });
    t.strictSame(await attempt(), { allowed: true, known: false, counted: [there, here], exhausted: true });
    t.equal((await attempt()).allowed, false, 'here is spent');
    t.strictSame((await store.readCounters([there, here])).map((state) => state.count), [1, 1], 'the refused attempt\'s count on there was given back');
    await store.settleAttempt({ reset: [here], giveBack: [there] });
    t.strictSame((await store.readCounters([there, here])).map((state) => state.count), [0, 0], 'settled in both places');

    const [pair, address] = [`test:{${id}-pair}`, `test:{${id}-address}`];
    const verdicts = await Promise.all(Array.from({ length: 60 }, () =>
      store.countAttempt({ counters: [{ name: address, limit: 100 }, { name: pair, limit: 10 }], windowMs: 60_000 })));
    t.equal(verdicts.filter((verdict) => verdict.allowed).length, 10, 'a parallel burst: exactly 10 of 60 allowed');
    t.strictSame((await store.readCounters([pair, address])).map((state) => state.count), [10, 10], 'only the allowed ones stay counted');

    const [set, email, other] = [`test:{${id}-email}:known`, `test:{${id}-email}:count`, `test:{${id}-elsewhere}`];
    await store.settleAttempt({ remember: { set, member: '192.0.2.1', ttlMs: 60_000, max: 10 } });
    const knownAttempt = (member: string) => store.countAttempt({
      counters: [{ name: other, limit: 100, exemptWhenKnown: true }, { name: email, limit: 100 }],
      windowMs: 60_000,
      known: { set, member, knownTtlMs: 60_000 },
    });
    t.strictSame(await knownAttempt('192.0.2.1'), { allowed: true, known: true, counted: [email], exhausted: false },
      'a member known in one place exempts a counter placed in another');
    const unknown = await knownAttempt('192.0.2.2');
    t.strictSame(unknown.allowed && { ...unknown, counted: [...unknown.counted].sort() },
      { allowed: true, known: false, counted: [email, other].sort(), exhausted: false }, 'an unknown member: both counted (in any order)');
  });

  t.test('rate limits: organization and key overrides are set, read and removed', async (t) => {
    const store = await open(t);
    const [a, b] = [newOrganization().id, newOrganization().id];
    const [keyA, keyB] = [`key_${randomBytes(16).toString('hex')}`, `key_${randomBytes(16).toString('hex')}`];
    // Only ours: the contract does not assume the environment's one table starts empty.
    const ours = async () => {
      const table = await store.readRateLimits();
      return {
        organizations: [...table.organizations].filter(([orgId]) => orgId === a || orgId === b).sort(),
        keys: [...table.keys].filter(([keyId]) => keyId === keyA || keyId === keyB).sort(),
      };
    };
    t.strictSame(await ours(), { organizations: [], keys: [] }, 'none at first');
    await store.setRateLimit({ kind: 'organization', orgId: a }, '600/60s');
    await store.setRateLimit({ kind: 'organization', orgId: b }, 'off');
    await store.setRateLimit({ kind: 'api_key', orgId: a, keyId: keyA }, '10/1s');
    await store.setRateLimit({ kind: 'api_key', orgId: b, keyId: keyB }, '5000/3600s');
    t.strictSame(await ours(), {
      organizations: [[a, '600/60s'], [b, 'off']].sort(),
      keys: [[keyA, { orgId: a, limit: '10/1s' }], [keyB, { orgId: b, limit: '5000/3600s' }]].sort(),
    });
    await store.setRateLimit({ kind: 'organization', orgId: a }, '100/60s');
    await store.setRateLimit({ kind: 'api_key', orgId: a, keyId: keyA }, '1/1s');
    const changed = await ours();
    t.strictSame(changed.organizations.find(([orgId]) => orgId === a), [a, '100/60s'], 'set again: replaced');
    t.strictSame(changed.keys.find(([keyId]) => keyId === keyA), [keyA, { orgId: a, limit: '1/1s' }]);
    await store.setRateLimit({ kind: 'organization', orgId: a }, null);
    await store.setRateLimit({ kind: 'api_key', orgId: b, keyId: keyB }, null);
    await store.setRateLimit({ kind: 'api_key', orgId: b, keyId: `key_${randomBytes(16).toString('hex')}` }, null);
    t.strictSame(await ours(), {
      organizations: [[b, 'off']],
      keys: [[keyA, { orgId: a, limit: '1/1s' }]],
    }, 'removed (null), each only its own; removing what is not there is no error');
    await store.dropRateLimits(a);
    await store.dropRateLimits(b);
    t.strictSame(await ours(), { organizations: [], keys: [] });
  });

  t.test('rate limits: dropRateLimits removes the organization\'s override and its keys\', no other\'s', async (t) => {
    const store = await open(t);
    const [a, b] = [newOrganization().id, newOrganization().id];
    const key = () => `key_${randomBytes(16).toString('hex')}`;
    const [a1, a2, b1] = [key(), key(), key()];
    await store.setRateLimit({ kind: 'organization', orgId: a }, '600/60s');
    await store.setRateLimit({ kind: 'organization', orgId: b }, '700/60s');
    await store.setRateLimit({ kind: 'api_key', orgId: a, keyId: a1 }, '10/1s');
    await store.setRateLimit({ kind: 'api_key', orgId: a, keyId: a2 }, '20/1s');
    await store.setRateLimit({ kind: 'api_key', orgId: b, keyId: b1 }, '30/1s');
    await store.dropRateLimits(a);
    const table = await store.readRateLimits();
    t.equal(table.organizations.has(a), false, 'the organization\'s own went');
    t.equal(table.keys.has(a1) || table.keys.has(a2), false, 'its keys\' went');
    t.equal(table.organizations.get(b), '700/60s', 'another organization\'s stays');
    t.strictSame(table.keys.get(b1), { orgId: b, limit: '30/1s' }, 'and its key\'s');
    t.equal([...table.keys.values()].some(({ orgId }) => orgId === a), false);
    await store.dropRateLimits(a);
    t.pass('dropping again is no error');
    await store.dropRateLimits(b);
  });

  /** A lease of a fresh credential's budget; `overrides` change it. */
  const lease = (overrides: Partial<RateLease> = {}): RateLease => ({
    credentialId: `key_${randomBytes(16).toString('hex')}`,
    orgId: newOrganization().id,
    limit: 100,
    windowMs: 60_000,
    want: 10,
    replica: 'replica-a',
    ...overrides,
  });

  t.test('rate budget: a quarter of what is left at most, never more than wanted, counted in the window', async (t) => {
    const store = await open(t);
    const first = lease({ want: 100 });
    const grant = await store.leaseRateBudget(first);
    t.match(grant, { granted: 25, used: 25, replicas: 1 }, 'want=100 of 100: a quarter');
    t.ok(grant.resetInMs > 0 && grant.resetInMs <= 60_000, `the window ends within its length (${grant.resetInMs} ms)`);
    t.match(await store.leaseRateBudget(first), { granted: 19, used: 44 }, 'then a quarter of 75, rounded up');
    t.match(await store.leaseRateBudget({ ...first, want: 3 }), { granted: 3, used: 47 }, 'never more than wanted');
    t.match(await store.leaseRateBudget({ ...first, want: 0 }), { granted: 0, used: 47 }, 'nothing wanted, nothing granted');
    const small = lease({ limit: 3, want: 10 });
    const grants: RateGrant[] = [];
    for (let i = 0; i < 5; i++) grants.push(await store.leaseRateBudget(small));
    t.strictSame(grants.map((g) => [g.granted, g.used]), [[1, 1], [1, 2], [1, 3], [0, 3], [0, 3]], 'at least one while any is left, then none');
    t.match(await store.leaseRateBudget(lease({ limit: 0 })), { granted: 0, used: 0 }, 'a limit of 0 grants nothing');
  });

  t.test('rate budget: a parallel burst from two replicas is granted exactly the limit, never more', async (t) => {
    const store = await open(t);
    const base = lease({ limit: 500, want: 7 });
    const grants = await Promise.all(Array.from({ length: 200 }, (_, i) =>
      store.leaseRateBudget({ ...base, replica: i % 2 === 0 ? 'replica-a' : 'replica-b' })));
    t.equal(grants.reduce((sum, g) => sum + g.granted, 0), 500, 'demand 1400 of 500: exactly 500 granted in all');
    t.ok(grants.every((g) => g.granted >= 0 && g.granted <= 7), 'each grant at most what it wanted');
    t.ok(grants.every((g) => g.used <= 500), 'used never passes the limit');
    t.equal(Math.max(...grants.map((g) => g.used)), 500);
    t.equal(Math.max(...grants.map((g) => g.replicas)), 2, 'two replicas drew on the window');
    t.match(await store.leaseRateBudget({ ...base, replica: 'replica-c' }), { granted: 0, used: 500, replicas: 3 }, 'a third replica finds it spent');
  });

  t.test('rate budget: windows are per credential; a changed window length opens a new one', async (t) => {
    const store = await open(t);
    const one = lease({ want: 100 });
    const other = lease({ orgId: one.orgId, want: 100 });
    t.match(await store.leaseRateBudget(one), { granted: 25, used: 25 });
    t.match(await store.leaseRateBudget(other), { granted: 25, used: 25, replicas: 1 }, 'another credential of the organization: its own window');
    t.match(await store.leaseRateBudget({ ...one, replica: 'replica-b' }), { used: 44, replicas: 2 });
    const longer = await store.leaseRateBudget({ ...one, windowMs: 120_000 });
    t.match(longer, { granted: 25, used: 25, replicas: 1 }, 'a new window: counted from zero, by this replica alone');
    t.ok(longer.resetInMs > 60_000 && longer.resetInMs <= 120_000, `of the new length (${longer.resetInMs} ms)`);
  });

  t.test('rate budget: a window opens again once it ended', async (t) => {
    const store = await open(t);
    const short = lease({ limit: 4, want: 4, windowMs: 300 });
    t.match(await store.leaseRateBudget(short), { granted: 1, used: 1 });
    for (let i = 0; i < 3; i++) await store.leaseRateBudget(short);
    // Spent, unless a slow machine let the 300 ms run out meanwhile: never past the limit either way.
    t.ok((await store.leaseRateBudget(short)).used <= 4);
    await pollUntil(20_000, async () => (await store.leaseRateBudget({ ...short, want: 1 })).used === 1);
    t.pass('a new window granted again, counted from zero');
  });

  t.test('concurrent sign-ups with one e-mail: exactly one wins', async (t) => {
    const store = await open(t);
    for (let round = 0; round < 10; round++) {
      const email = `${randomUUID()}@example.com`;
      const rivals = [newOrganization({ email }), newOrganization({ email }), newOrganization({ email })];
      const results = await Promise.all(rivals.map((org) => store.createOrganizationIfEmailFree(org)));
      const winners = results.filter((result) => result !== 'email-taken');
      t.equal(winners.length, 1, 'one winner');
      const winner = rivals[results.findIndex((result) => result !== 'email-taken')]!;
      t.strictSame(await store.findOrganizationByEmail(email), winner);
      for (const rival of rivals) {
        if (rival !== winner) t.equal(await store.findOrganizationById(rival.id), undefined);
      }
    }
  });
}

/** As the services make them: `org_` and 32 hex characters (give another id to test other shapes). */
export function newOrganization(overrides: Partial<NewOrganization> = {}): NewOrganization {
  const id = `org_${randomBytes(16).toString('hex')}`;
  return {
    id,
    name: `Org ${id.slice(4, 12)}`,
    email: `${id}@example.com`,
    passwordHash: '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo',
    createdAt: new Date().toISOString(),
    ...overrides,
  };
}

/** As the services make them: a lookup hash under the organization's tag, `key_` and 32 hex. */
export function newApiKey(orgId: string, createdAt = new Date().toISOString(), id = `key_${randomBytes(16).toString('hex')}`): ApiKeyRecord {
  const tag = shardTagOf(orgId);
  return { id, orgId, hash: tagged(tag, randomBytes(16).toString('base64url')), displayPrefix: `agk_live_${tag}_${randomBytes(2).toString('hex')}`, createdAt };
}

/** A session of the organization's, with its tag, that ends ttlMs from now. */
export function newSession(orgId: string, ttlMs = 3_600_000): Session {
  return { id: tagged(shardTagOf(orgId), randomBytes(16).toString('base64url')), orgId, expiresAt: Date.now() + ttlMs };
}

/** What findApiKeyByHash answers for a stored key. */
export function found(key: ApiKeyRecord): FoundApiKey {
  return {
    id: key.id,
    orgId: key.orgId,
    hash: key.hash,
    ...(key.expiresAt !== undefined && { expiresAt: key.expiresAt }),
    ...(key.scopes !== undefined && { scopes: [...new Set(key.scopes)].sort() }),
  };
}

/** Polls until check() is true; returns the time it first was. Throws after timeoutMs. */
export async function pollUntil(timeoutMs: number, check: () => Promise<boolean> | boolean): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return Date.now();
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function created(store: Store, org: NewOrganization): Promise<NewOrganization> {
  const result = await store.createOrganizationIfEmailFree(org);
  if (result === 'email-taken') throw new Error('fresh e-mail taken');
  return org;
}

/** What listApiKeys shows of a stored key (one argument: it is mapped over lists). */
function summary(key: ApiKeyRecord): ApiKeySummary {
  return used(key, undefined);
}

/** As summary(), with a last use recorded. */
function used(key: ApiKeyRecord, lastUsedAt: number | undefined): ApiKeySummary {
  return {
    id: key.id,
    displayPrefix: key.displayPrefix,
    createdAt: key.createdAt,
    ...(key.name !== undefined && { name: key.name }),
    ...(key.expiresAt !== undefined && { expiresAt: key.expiresAt }),
    ...(key.scopes !== undefined && { scopes: [...new Set(key.scopes)].sort() }),
    ...(lastUsedAt !== undefined && { lastUsedAt }),
  };
}

function sha(): string {
  return randomBytes(32).toString('hex');
}

function sortRevoked(revoked: readonly Revoked[]): Revoked[] {
  return [...revoked].sort((x, y) => (x.kind + x.cacheKey < y.kind + y.cacheKey ? -1 : 1));
}
