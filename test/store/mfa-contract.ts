/**
 * The second-factor part of the store contract (store/mfa.ts): run by storeContract on memory,
 * standalone Redis, Sentinel and Cluster.
 */
import type { Test } from 'tap';
import { newMfaToken } from '../../src/credentials/mfa-tokens.js';
import { createSecondFactorBound, MFA_TOKENS_PER_WINDOW } from '../../src/guards/second-factor-bound.js';
import { Problem } from '../../src/problems.js';
import type { GatewayStore, NewOrganization } from '../../src/store/store.js';

export function mfaContract(t: Test, open: (t: Test) => Promise<GatewayStore>, helpers: { newOrganization: () => NewOrganization }): void {
  async function org(store: GatewayStore) {
    const made = helpers.newOrganization();
    if ((await store.createOrganizationIfEmailFree(made)) === 'email-taken') throw new Error('fresh e-mail taken');
    return made;
  }

  t.test('mfa: enrol pending, activate once with a later step, steps used once, recovery codes once, removed', async (t) => {
    const store = await open(t);
    const { id } = await org(store);
    t.equal(await store.findTotp(id), undefined, 'none yet');
    t.equal(await store.beginTotp(helpers.newOrganization().id, 'sealed'), undefined, 'no such organization');
    t.equal(await store.beginTotp(id, 'sealed-1'), 'pending');
    t.equal(await store.beginTotp(id, 'sealed-2'), 'pending', 'a new enrolment replaces the pending one');
    t.strictSame(await store.findTotp(id), { secret: 'sealed-2', active: false, lastStep: 0, recoveryCodesLeft: 0 });
    t.equal(await store.useTotpStep(id, 10), false, 'a pending factor accepts no login code');
    t.equal(await store.useRecoveryCode(id, 'h1'), false);
    t.equal(await store.activateTotp(id, 'sealed-1', 100, ['h1', 'h2']), false, 'not the pending secret');
    t.equal(await store.activateTotp(id, 'sealed-2', 100, ['h1', 'h2']), 'first', 'the first factor: its codes set');
    t.equal(await store.activateTotp(id, 'sealed-2', 101, ['h3']), false, 'active already');
    t.equal(await store.beginTotp(id, 'sealed-3'), 'active', 'no second enrolment over an active factor');
    t.strictSame(await store.findTotp(id), { secret: 'sealed-2', active: true, lastStep: 100, recoveryCodesLeft: 2 });
    t.equal(await store.useTotpStep(id, 100), false, 'the enrolment code\'s step is used');
    t.equal(await store.useTotpStep(id, 99), false, 'an earlier step');
    const racing = await Promise.all([store.useTotpStep(id, 101), store.useTotpStep(id, 101), store.useTotpStep(id, 101)]);
    t.equal(racing.filter(Boolean).length, 1, 'one of three racing uses of one step');
    t.equal(await store.useRecoveryCode(id, 'h1'), true);
    t.equal(await store.useRecoveryCode(id, 'h1'), false, 'once');
    t.equal(await store.useRecoveryCode(id, 'nope'), false);
    t.equal((await store.findTotp(id))?.recoveryCodesLeft, 1);
    t.equal(await store.replaceRecoveryCodes(id, ['n1', 'n2', 'n3']), true);
    t.equal(await store.useRecoveryCode(id, 'h2'), false, 'old codes die');
    t.equal(await store.useRecoveryCode(id, 'n2'), true);
    t.equal(await store.removeTotp(id), true);
    t.equal(await store.removeTotp(id), false);
    t.equal(await store.findTotp(id), undefined);
    t.equal(await store.replaceRecoveryCodes(id, ['x']), false, 'no factor');
    t.equal(await store.useRecoveryCode(id, 'n3'), false, 'codes removed with it');

    const doomed = await org(store);
    t.equal(await store.beginTotp(doomed.id, 'sealed'), 'pending');
    t.ok(await store.deleteOrganization(doomed.id));
    t.equal(await store.findTotp(doomed.id), undefined, 'a deleted organization\'s factor goes with it');
  });

  t.test('mfa: challenges found, spent by the limit of wrong codes, used once, expire', async (t) => {
    const store = await open(t);
    const { id } = await org(store);
    const first = newMfaToken(id);
    const challenge = { orgId: id, passwordCheck: 'pc', expiresAt: Date.now() + 300_000 };
    await store.createMfaChallenge(first.tokenHash, challenge);
    t.strictSame(await store.findMfaChallenge(first.tokenHash), challenge);
    t.equal(await store.findMfaChallenge(newMfaToken(id).tokenHash), undefined, 'unknown');
    t.equal(await store.findMfaChallenge('no-tag'), undefined, 'no shape');
    for (let i = 1; i <= 4; i++) t.equal(await store.failMfaChallenge(first.tokenHash, 5), i);
    t.ok(await store.findMfaChallenge(first.tokenHash), 'four wrong codes: still live');
    t.equal(await store.failMfaChallenge(first.tokenHash, 5), 5);
    t.equal(await store.findMfaChallenge(first.tokenHash), undefined, 'the fifth spends it');
    t.equal(await store.failMfaChallenge(first.tokenHash, 5), 0);
    t.equal(await store.consumeMfaChallenge(first.tokenHash), false);

    const second = newMfaToken(id);
    await store.createMfaChallenge(second.tokenHash, challenge);
    const uses = await Promise.all([store.consumeMfaChallenge(second.tokenHash), store.consumeMfaChallenge(second.tokenHash)]);
    t.strictSame(uses.filter(Boolean).length, 1, 'one of two racing uses');
    t.equal(await store.findMfaChallenge(second.tokenHash), undefined);

    const short = newMfaToken(id);
    await store.createMfaChallenge(short.tokenHash, { ...challenge, expiresAt: Date.now() + 50 });
    const deadline = Date.now() + 5_000;
    while ((await store.findMfaChallenge(short.tokenHash)) !== undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    t.equal(await store.findMfaChallenge(short.tokenHash), undefined, 'expired');
    t.equal(await store.consumeMfaChallenge(short.tokenHash), false);
  });

  // Issue 45: the organization's bound on wrong second-factor proofs, counted in this store.
  t.test('mfa: the organization\'s failure bound admits exactly its limit of a parallel burst; a right proof resets it; mfaTokens bounded', async (t) => {
    const store = await open(t);
    const { id } = await org(store);
    const other = await org(store);
    const bound = createSecondFactorBound(store, 5);
    const codeOf = (error: unknown) => (error instanceof Problem ? error.problem : String(error));
    const burst = await Promise.allSettled(Array.from({ length: 30 }, () => bound.proof(id)));
    const admitted = burst.filter((r) => r.status === 'fulfilled');
    t.equal(admitted.length, 5, 'exactly 5 of 30 parallel proofs counted');
    t.ok(burst.every((r) => r.status === 'fulfilled' || codeOf(r.reason) === 'tooManySecondFactorFailures'), 'the rest refused with 1121');
    t.equal(admitted.filter((r) => r.status === 'fulfilled' && r.value.exhausted).length, 1, 'one took the last');
    t.equal(await bound.proof(id).then(() => 'admitted', codeOf), 'tooManySecondFactorFailures', 'wrong ones stay counted: the next is refused');
    t.type(await bound.proof(other.id), 'object', 'another organization counts apart');
    await (admitted[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof bound.proof>>>).value.succeeded();
    const again = await Promise.allSettled(Array.from({ length: 8 }, () => bound.proof(id)));
    t.equal(again.filter((r) => r.status === 'fulfilled').length, 5, 'a right proof starts the count again');
    const given = again.find((r) => r.status === 'fulfilled') as PromiseFulfilledResult<Awaited<ReturnType<typeof bound.proof>>>;
    await given.value.notJudged();
    t.type(await bound.proof(id), 'object', 'a proof never judged gives its count back');

    const issued = await Promise.allSettled(Array.from({ length: MFA_TOKENS_PER_WINDOW + 10 }, () => bound.issue(id, 60_000)));
    t.equal(issued.filter((r) => r.status === 'fulfilled').length, MFA_TOKENS_PER_WINDOW, `${MFA_TOKENS_PER_WINDOW} mfaTokens a window, however they interleave`);
    t.ok(issued.every((r) => r.status === 'fulfilled' || codeOf(r.reason) === 'tooManyMfaTokens'), 'the rest refused with 1122');
  });
}
