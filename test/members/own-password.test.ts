import t from 'tap';
import { ADMIN_TOKEN, eventually, send } from '../helpers/gateway.js';
import { call, clock, codeAt, problem } from '../helpers/second-factor.js';
import { admin, invite, loginStep, stopSharedRedis, twoReplicas } from './started-team.js';

/**
 * Each member's own password (issue 50) over real HTTP, on the memory store and on two replicas
 * of one real Redis: a member changes its own password (the policy applies; its other sessions
 * end, the owner's stay, the organization's password is untouched); the operator resets a
 * member's password (a one-time token used at POST /auth/password/reset) and removes a member's
 * second factor, each ending only that member's sessions, audited naming the member, never with
 * a secret.
 */
t.teardown(stopSharedRedis);

const alive = async (gw: Parameters<typeof call>[0], token: string) => (await call(gw, 'GET', '/auth/mfa', undefined, token)).status === 200;

for (const store of ['memory', 'redis'] as const) {
  t.test(`${store}: a member changes its own password; the owner's still works`, async (t) => {
    const time = clock();
    const [a, b] = await twoReplicas(t, store, time.now);
    const org = await a.createOrganization();
    const owner = await a.login(org.email, org.password);
    const dev = await invite(t, a, owner, 'developer');
    const devElsewhere = await b.login(dev.email, dev.password);
    const fresh = 'a-brand-new-member-password';

    problem(t, await call(a, 'POST', '/auth/password', { currentPassword: org.password, newPassword: fresh }, dev.token), 403, 1217, "the organization's password is not the member's");
    problem(t, await call(a, 'POST', '/auth/password', { currentPassword: dev.password, newPassword: 'short' }, dev.token), 400, 1213, 'the password policy applies');
    problem(t, await call(a, 'POST', '/auth/password', { currentPassword: dev.password, newPassword: `${dev.email}-and-more` }, dev.token), 400, 1216, "the member's e-mail is its context");
    const changed = await call(a, 'POST', '/auth/password', { currentPassword: dev.password, newPassword: fresh }, dev.token);
    t.equal(changed.status, 200, `changed (${changed.body.slice(0, 160)})`);
    const newToken = (changed.json() as { token: string }).token;
    t.equal(await alive(b, newToken), true, 'the new token works on every replica');
    t.equal(await alive(b, dev.token), false, 'the session presented ended');
    t.equal(await alive(a, devElsewhere), false, "the member's other session ended");
    t.equal(await alive(b, owner), true, "the owner's session stays");
    problem(t, await call(a, 'POST', '/auth/login', { email: dev.email, password: dev.password }), 401, 1105, 'the old password fails');
    t.equal((await loginStep(b, { email: dev.email, password: fresh })).status, 200, 'the new one logs in');
    t.equal((await loginStep(b, org)).status, 200, "the organization's (the owner's) password still works");

    const ownerChanged = await call(b, 'POST', '/auth/password', { currentPassword: org.password, newPassword: 'the-owners-new-password' }, owner);
    t.equal(ownerChanged.status, 200, 'the owner changes the organization\'s, as before');
    t.equal((await loginStep(a, { email: dev.email, password: fresh })).status, 200, "the member's own password is not the organization's");
    const ownerToken = (ownerChanged.json() as { token: string }).token;
    let trail: { events: Array<{ member?: { id: string } }> } = { events: [] };
    // The trail writes off the request path: read until the entry is in.
    await eventually(async () => {
      trail = (await call(a, 'GET', '/auth/audit?type=password.changed', undefined, ownerToken)).json() as typeof trail;
      return trail.events.some((e) => e.member?.id === dev.id);
    }, 10_000);
    t.ok(trail.events.some((e) => e.member?.id === dev.id), "the member's change names it in the trail");
    t.notOk(JSON.stringify(trail).includes(fresh), 'never a password');
  });

  t.test(`${store}: the operator resets a member's password and second factor`, async (t) => {
    const time = clock();
    const [a, b] = await twoReplicas(t, store, time.now);
    const org = await a.createOrganization();
    const owner = await a.login(org.email, org.password);
    const dev = await invite(t, a, owner, 'developer');
    problem(t, await admin(a, 'POST', `/admin/organizations/${org.id}/members/mem_unknown/password-reset`), 404, 1307, 'an unknown member');

    const issued = await admin(a, 'POST', `/admin/organizations/${org.id}/members/${dev.id}/password-reset`);
    t.equal(issued.status, 200, `a reset token for the member (${issued.body.slice(0, 160)})`);
    const { resetToken } = issued.json() as { resetToken: string };
    t.match(resetToken, /^agr_/);
    t.equal(await alive(b, dev.token), false, "the member's sessions ended");
    t.equal(await alive(b, owner), true, "the owner's stay");
    const reset = await call(b, 'POST', '/auth/password/reset', { resetToken, newPassword: 'the-member-chose-this-one' });
    t.equal(reset.status, 204, 'the member sets its own');
    problem(t, await call(a, 'POST', '/auth/password/reset', { resetToken, newPassword: 'and-once-more-please' }), 400, 1218, 'once');
    t.equal((await loginStep(a, { email: dev.email, password: 'the-member-chose-this-one' })).status, 200, 'the member logs in with it');
    t.equal((await loginStep(a, org)).status, 200, "the organization's password untouched");

    // Its second factor, lost: the operator removes it; the owner's stays.
    const devToken = (await loginStep(a, { email: dev.email, password: 'the-member-chose-this-one' })).token!;
    const enrol = async (token: string, password: string) => {
      const { secret } = (await call(a, 'POST', '/auth/mfa/totp', { currentPassword: password }, token)).json() as { secret: string };
      t.equal((await call(a, 'POST', '/auth/mfa/totp/confirm', { code: codeAt(secret, time.now()) }, token)).status, 200, 'enrolled');
    };
    await enrol(devToken, 'the-member-chose-this-one');
    await enrol(owner, org.password);
    const status = await admin(b, 'GET', `/admin/organizations/${org.id}/members/${dev.id}/mfa`);
    t.equal((status.json() as { totp: { enabled: boolean } }).totp.enabled, true, "the operator sees the member's factor");
    const removed = await admin(b, 'DELETE', `/admin/organizations/${org.id}/members/${dev.id}/mfa`);
    t.strictSame(removed.json(), { removed: true, sessionsEnded: 2 }, "removed; the member's sessions (its two logins since the reset) ended");
    t.equal(await alive(a, devToken), false, 'its token is refused');
    t.equal(await alive(a, owner), true, "the owner's session stays");
    t.equal((await loginStep(a, { email: dev.email, password: 'the-member-chose-this-one' })).status, 200, 'its password alone logs it in');
    t.equal((await loginStep(a, org)).code, 1116, "the owner's second factor stays");
    t.strictSame((await admin(b, 'DELETE', `/admin/organizations/${org.id}/members/${dev.id}/mfa`)).json(), { removed: false, sessionsEnded: 0 }, 'nothing left to remove');

    type Trail = { events: Array<{ type: string; details?: Record<string, unknown> }> };
    let trail: Trail = { events: [] };
    const named = (type: string) => trail.events.find((e) => e.type === type && e.details?.memberId === dev.id);
    // The trail writes off the request path: read until both entries are in.
    await eventually(async () => {
      trail = (await send(`${a.opsUrl}/admin/audit?org=${org.id}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json() as Trail;
      return named('password.reset_issued') !== undefined && named('mfa.removed') !== undefined;
    }, 10_000);
    t.equal(named('password.reset_issued')?.details?.memberEmail, dev.email, 'the reset is audited naming the member');
    t.equal(named('mfa.removed')?.details?.memberEmail, dev.email, 'the removal too');
    t.notOk(JSON.stringify(trail).includes(resetToken), 'never the token');
    t.notOk(a.logs.text().includes(resetToken) || b.logs.text().includes(resetToken), 'nor in a log line');
  });
}
