/**
 * The passkey part of the store contract (store/passkeys.ts), with what it shares with TOTP (the
 * recovery codes, the login challenge's passkey challenge): run by storeContract on memory,
 * standalone Redis, Sentinel and Cluster.
 */
import type { Test } from 'tap';
import { newMfaToken } from '../../src/credentials/mfa-tokens.js';
import { MAX_PASSKEYS_PER_ORGANIZATION, type Passkey } from '../../src/store/passkeys.js';
import type { GatewayStore, NewOrganization } from '../../src/store/store.js';

let serial = 0;
const passkey = (over: Partial<Passkey> = {}): Passkey => ({
  id: `cred-${++serial}-${Math.random().toString(36).slice(2)}`,
  name: `Passkey ${serial}`,
  publicKey: 'pQECAyYgASFYIA',
  counter: 0,
  transports: ['internal', 'hybrid'],
  createdAt: 1_700_000_000_000 + serial,
  lastUsedAt: null,
  ...over,
});

export function passkeyContract(t: Test, open: (t: Test) => Promise<GatewayStore>, helpers: { newOrganization: () => NewOrganization }): void {
  async function org(store: GatewayStore) {
    const made = helpers.newOrganization();
    if ((await store.createOrganizationIfEmailFree(made)) === 'email-taken') throw new Error('fresh e-mail taken');
    return made;
  }

  t.test('passkeys: added (first brings the codes), listed oldest first, renamed, counters used once, removed (the last takes the codes)', async (t) => {
    const store = await open(t);
    const { id } = await org(store);
    t.strictSame(await store.listPasskeys(id), []);
    t.equal(await store.addPasskey(helpers.newOrganization().id, passkey(), ['h']), undefined, 'no such organization');
    const one = passkey({ counter: 5 });
    const two = passkey();
    t.equal(await store.addPasskey(id, one, ['h1', 'h2']), 'first', 'the first factor');
    t.equal(await store.countRecoveryCodes(id), 2);
    t.equal(await store.addPasskey(id, one, ['x']), 'duplicate');
    t.equal(await store.addPasskey(id, two, ['x']), 'added');
    t.equal(await store.countRecoveryCodes(id), 2, 'a second factor leaves the codes');
    t.strictSame(await store.listPasskeys(id), [one, two]);
    t.equal(await store.useRecoveryCode(id, 'h1'), true, 'codes work with passkeys only');
    t.equal(await store.replaceRecoveryCodes(id, ['n1', 'n2', 'n3']), true);
    t.equal(await store.countRecoveryCodes(id), 3);

    t.strictSame(await store.renamePasskey(id, one.id, 'Phone'), { ...one, name: 'Phone' });
    t.equal(await store.renamePasskey(id, 'nope', 'x'), undefined);

    t.equal(await store.usePasskey(id, one.id, 5, 1000), false, 'a counter not above the stored one');
    t.equal(await store.usePasskey(id, one.id, 4, 1000), false);
    const racing = await Promise.all([6, 6, 6].map((counter) => store.usePasskey(id, one.id, counter, 2000)));
    t.equal(racing.filter(Boolean).length, 1, 'one of three racing uses of one counter');
    t.equal(await store.usePasskey(id, two.id, 0, 3000), true, 'both 0: an authenticator without a counter');
    t.equal(await store.usePasskey(id, two.id, 0, 4000), true, 'and again');
    t.equal(await store.usePasskey(id, 'nope', 9, 1), false, 'unknown');
    const [first, second] = await store.listPasskeys(id);
    t.match(first, { counter: 6, lastUsedAt: 2000, name: 'Phone' });
    t.match(second, { counter: 0, lastUsedAt: 4000 });
    t.equal(await store.usePasskey(id, two.id, 3, 5000), true, 'a counter starting late');
    t.equal(await store.usePasskey(id, two.id, 0, 6000), false, 'then 0 is a step back');

    t.equal(await store.removePasskey(id, one.id), true);
    t.equal(await store.removePasskey(id, one.id), false);
    t.equal(await store.countRecoveryCodes(id), 3, 'a passkey left: codes stay');
    t.equal(await store.removePasskey(id, two.id), true);
    t.strictSame(await store.listPasskeys(id), []);
    t.equal(await store.countRecoveryCodes(id), 0, 'the last factor takes the codes');
    t.equal(await store.useRecoveryCode(id, 'n2'), false);

    const other = await org(store);
    const theirs = passkey();
    await store.addPasskey(other.id, theirs, ['o1']);
    t.equal(await store.usePasskey(id, theirs.id, 1, 1), false, 'another organization\'s passkey is unknown here');
    t.equal(await store.renamePasskey(id, theirs.id, 'x'), undefined);
    t.equal(await store.removePasskey(id, theirs.id), false);
    t.ok(await store.deleteOrganization(other.id));
    t.strictSame(await store.listPasskeys(other.id), [], 'a deleted organization\'s passkeys go with it');
  });

  t.test('passkeys: a limit per organization; TOTP beside them shares the codes; the operator removes every factor', async (t) => {
    const store = await open(t);
    const { id } = await org(store);
    for (let i = 0; i < MAX_PASSKEYS_PER_ORGANIZATION; i++) t.not(await store.addPasskey(id, passkey(), ['c']), 'limit');
    t.equal(await store.addPasskey(id, passkey(), ['c']), 'limit');
    t.equal(await store.beginTotp(id, 'sealed'), 'pending');
    t.equal(await store.activateTotp(id, 'sealed', 10, ['t1']), 'added', 'TOTP beside passkeys: no new codes');
    t.equal(await store.countRecoveryCodes(id), 1);
    t.equal(await store.useRecoveryCode(id, 't1'), false, 'the passkeys\' codes kept');
    t.equal(await store.removeTotp(id), true);
    t.equal(await store.countRecoveryCodes(id), 1, 'removing TOTP keeps the codes while passkeys remain');
    await store.beginPasskeyRegistration(id, { challenge: 'c', expiresAt: Date.now() + 60_000 });
    t.equal(await store.removeSecondFactors(id), true);
    t.equal(await store.removeSecondFactors(id), false, 'nothing left');
    t.strictSame(await store.listPasskeys(id), []);
    t.equal(await store.countRecoveryCodes(id), 0);
    t.equal(await store.takePasskeyRegistration(id), undefined, 'the pending registration too');

    const totpOnly = await org(store);
    await store.beginTotp(totpOnly.id, 'sealed');
    t.equal(await store.activateTotp(totpOnly.id, 'sealed', 10, ['t1']), 'first');
    t.equal(await store.addPasskey(totpOnly.id, passkey(), ['p1']), 'added', 'a passkey beside TOTP: no new codes');
    t.equal(await store.useRecoveryCode(totpOnly.id, 't1'), true);
  });

  t.test('passkeys: one pending registration, taken once, replaced by a new one, expiring; a login challenge keeps its passkey challenge', async (t) => {
    const store = await open(t);
    const { id } = await org(store);
    t.equal(await store.takePasskeyRegistration(id), undefined, 'none');
    await store.beginPasskeyRegistration(id, { challenge: 'first', expiresAt: Date.now() + 60_000 });
    await store.beginPasskeyRegistration(id, { challenge: 'second', expiresAt: Date.now() + 60_000 });
    const taken = await Promise.all([store.takePasskeyRegistration(id), store.takePasskeyRegistration(id)]);
    t.strictSame(taken.filter((r) => r !== undefined).map((r) => r!.challenge), ['second'], 'the latest, taken by one of two');
    // Its end already passed (as a clock moved on would see it): nobody's, whatever Redis's TTL says.
    await store.beginPasskeyRegistration(id, { challenge: 'late', expiresAt: Date.now() - 1 });
    t.equal(await store.takePasskeyRegistration(id), undefined, 'expired');

    const token = newMfaToken(id);
    const challenge = { orgId: id, passwordCheck: 'pc', expiresAt: Date.now() + 300_000, passkeyChallenge: 'webauthn-challenge' };
    await store.createMfaChallenge(token.tokenHash, challenge);
    t.strictSame(await store.findMfaChallenge(token.tokenHash), challenge);
  });
}
