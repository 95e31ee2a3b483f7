import t from 'tap';
import { call, clock, problem } from '../helpers/second-factor.js';
import { invite, loginStep, stopSharedRedis, twoReplicas } from './started-team.js';

/**
 * An owner other than the first changes the organization's e-mail (PATCH /auth/organization,
 * issue 50) with its own current password, as every other change of its own credentials: never
 * with the first member's, which it need not know.
 */
t.teardown(stopSharedRedis);

t.test("an owner who is not the first member proves its own password to change the organization's e-mail", async (t) => {
  const [a] = await twoReplicas(t, 'memory', clock().now);
  const org = await a.createOrganization();
  const first = await a.login(org.email, org.password);
  const owner = await invite(t, a, first, 'owner');
  const newEmail = `renamed-${Date.now()}@example.com`;
  problem(t, await call(a, 'PATCH', '/auth/organization', { email: newEmail, currentPassword: org.password }, owner.token), 403, 1217, "the first member's password is not this owner's");
  const changed = await call(a, 'PATCH', '/auth/organization', { email: newEmail, currentPassword: owner.password }, owner.token);
  t.equal(changed.status, 200, changed.body.slice(0, 200));
  t.equal((changed.json() as { email: string }).email, newEmail);
  t.equal((await loginStep(a, { email: newEmail, password: org.password })).status, 200, "the organization's own login follows its e-mail, with its own password");
});
