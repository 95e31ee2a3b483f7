/**
 * The password part of the store contract (store/password-resets.ts): run by storeContract on
 * memory, standalone Redis, Sentinel and Cluster.
 */
import { randomBytes } from 'node:crypto';
import type { Test } from 'tap';
import { newResetToken } from '../../src/credentials/reset-tokens.js';
import { shardTagOf, tagged } from '../../src/store/shard-tag.js';
import type { GatewayStore, NewOrganization, Revoked } from '../../src/store/store.js';

type Helpers = {
  newOrganization: () => NewOrganization;
  newSession: (orgId: string) => { id: string; orgId: string; expiresAt: number };
  pollUntil: (timeoutMs: number, check: () => Promise<boolean>) => Promise<number>;
};

const HASH_A = '$argon2id$v=19$m=19456,t=2,p=1$YWFhYWFhYWE$aGFzaC1h';
const HASH_B = '$argon2id$v=19$m=19456,t=2,p=1$YmJiYmJiYmI$aGFzaC1i';
const sorted = (revoked: readonly Revoked[] | undefined) => [...(revoked ?? [])].map((r) => `${r.kind} ${r.cacheKey}`).sort();

export function passwordResetContract(t: Test, open: (t: Test) => Promise<GatewayStore>, helpers: Helpers): void {
  const { newOrganization, newSession, pollUntil } = helpers;

  async function orgWithSessions(t: Test, store: GatewayStore, sessions: number) {
    const org = newOrganization();
    if ((await store.createOrganizationIfEmailFree(org)) === 'email-taken') throw new Error('fresh e-mail taken');
    const ids: string[] = [];
    for (let i = 0; i < sessions; i++) {
      const session = newSession(org.id);
      t.equal(await store.createSession(session), 'created');
      ids.push(session.id);
    }
    return { org, ids };
  }

  t.test('passwords: replacePassword sets the hash and ends every session of that organization only', async (t) => {
    const store = await open(t);
    const { org, ids } = await orgWithSessions(t, store, 2);
    const other = await orgWithSessions(t, store, 1);
    t.strictSame(sorted(await store.replacePassword(org.id, HASH_B)), ids.map((id) => `session ${id}`).sort(), 'its sessions, revoked');
    t.equal((await store.findOrganizationById(org.id))?.passwordHash, HASH_B);
    for (const id of ids) t.equal(await store.findSession(id), undefined);
    t.strictSame(await store.listSessions(org.id), []);
    t.ok(await store.findSession(other.ids[0]!), "another organization's session stays");
    t.equal((await store.findOrganizationById(other.org.id))?.passwordHash, other.org.passwordHash, "and its password");
    t.strictSame(await store.replacePassword(org.id, HASH_A), [], 'no session left: nothing revoked');
    t.equal(await store.replacePassword(newOrganization().id, HASH_A), undefined, 'no such organization');
  });

  t.test('resets: made (sessions end), found, used once; a newer one replaces it; bound to its organization', async (t) => {
    const store = await open(t);
    const { org, ids } = await orgWithSessions(t, store, 2);
    const other = await orgWithSessions(t, store, 1);
    const first = newResetToken(org.id);
    const expiresAt = Date.now() + 3_600_000;
    t.strictSame(sorted(await store.createPasswordReset({ orgId: org.id, tokenHash: first.tokenHash, expiresAt })), ids.map((id) => `session ${id}`).sort(), 'every session ended');
    t.strictSame(await store.findPasswordReset(first.tokenHash), { orgId: org.id, expiresAt });
    t.equal(await store.findPasswordReset(tagged(shardTagOf(org.id), randomBytes(32).toString('base64url'))), undefined, 'an unknown hash');
    t.equal(await store.findPasswordReset('no-tag'), undefined, 'a hash of no shape');

    // A newer reset makes the first worthless.
    const second = newResetToken(org.id);
    t.strictSame(await store.createPasswordReset({ orgId: org.id, tokenHash: second.tokenHash, expiresAt }), []);
    t.equal(await store.consumePasswordReset(org.id, first.tokenHash, HASH_B), undefined, 'the replaced reset is refused');
    t.equal((await store.findOrganizationById(org.id))?.passwordHash, org.passwordHash, 'and changed nothing');

    // Another organization cannot use it, and it stays usable by its own.
    t.equal(await store.consumePasswordReset(other.org.id, second.tokenHash, HASH_B), undefined, "another organization's use is refused");
    t.equal((await store.findOrganizationById(other.org.id))?.passwordHash, other.org.passwordHash);
    t.ok(await store.findSession(other.ids[0]!), "another organization's session stays");

    const session = newSession(org.id);
    t.equal(await store.createSession(session), 'created');
    t.strictSame(sorted(await store.consumePasswordReset(org.id, second.tokenHash, HASH_B)), [`session ${session.id}`], 'used: the hash set, every session ended');
    t.equal((await store.findOrganizationById(org.id))?.passwordHash, HASH_B);
    t.equal(await store.findPasswordReset(second.tokenHash), undefined, 'gone once used');
    t.equal(await store.consumePasswordReset(org.id, second.tokenHash, HASH_A), undefined, 'not twice');
    t.equal((await store.findOrganizationById(org.id))?.passwordHash, HASH_B);
    const missing = newOrganization().id;
    t.equal(await store.createPasswordReset({ orgId: missing, tokenHash: newResetToken(missing).tokenHash, expiresAt }), undefined, 'no such organization');
    await t.rejects(store.createPasswordReset({ orgId: org.id, tokenHash: newResetToken(missing).tokenHash, expiresAt }), 'a hash under another tag is refused');
  });

  t.test('resets: two racing uses of one reset: exactly one wins', async (t) => {
    const store = await open(t);
    const { org } = await orgWithSessions(t, store, 1);
    const reset = newResetToken(org.id);
    await store.createPasswordReset({ orgId: org.id, tokenHash: reset.tokenHash, expiresAt: Date.now() + 60_000 });
    const outcomes = await Promise.all([HASH_A, HASH_B, HASH_A, HASH_B].map((hash) => store.consumePasswordReset(org.id, reset.tokenHash, hash)));
    t.equal(outcomes.filter((o) => o !== undefined).length, 1, 'one use succeeded');
  });

  t.test('resets: expired, they are neither found nor used; the organization\'s deletion takes them', async (t) => {
    const store = await open(t);
    const { org } = await orgWithSessions(t, store, 0);
    const brief = newResetToken(org.id);
    const expiresAt = Date.now() + 1500;
    await store.createPasswordReset({ orgId: org.id, tokenHash: brief.tokenHash, expiresAt });
    const goneAt = await pollUntil(20_000, async () => (await store.findPasswordReset(brief.tokenHash)) === undefined);
    t.ok(goneAt >= expiresAt - 5, 'not found from its end on, not before');
    t.equal(await store.consumePasswordReset(org.id, brief.tokenHash, HASH_B), undefined, 'an expired reset is refused');
    t.equal((await store.findOrganizationById(org.id))?.passwordHash, org.passwordHash);

    const live = newResetToken(org.id);
    await store.createPasswordReset({ orgId: org.id, tokenHash: live.tokenHash, expiresAt: Date.now() + 60_000 });
    t.ok(await store.deleteOrganization(org.id));
    t.equal(await store.findPasswordReset(live.tokenHash), undefined, 'gone with its organization');
    t.equal(await store.consumePasswordReset(org.id, live.tokenHash, HASH_B), undefined);
  });
}
