import t from 'tap';
import { runCli } from '../helpers/cli.js';
import { ADMIN_TOKEN, startGateway } from '../helpers/gateway.js';
import { call } from '../helpers/second-factor.js';
import { invite } from '../members/started-team.js';

/**
 * `authgate org reset-password|mfa|remove-mfa <id> --member <memberId>` (issue 50): one member's
 * own password and second factor, as shipped (dist/cli/authgate.js, built first), against a real
 * gateway on free ports.
 */


t.test("org reset-password, mfa and remove-mfa with --member act on that member's own", async (t) => {
  const gw = await startGateway(t);
  const env = { AUTHGATE_ADMIN_URL: gw.opsUrl, AUTHGATE_ADMIN_TOKEN: ADMIN_TOKEN };
  const org = await gw.createOrganization();
  const owner = await gw.login(org.email, org.password);
  const dev = await invite(t, gw, owner, 'developer');

  const reset = await runCli(['org', 'reset-password', org.id, '--member', dev.id], env);
  t.equal(reset.code, 0, `exits 0 (stderr: ${reset.stderr})`);
  const { resetToken } = JSON.parse(reset.stdout) as { resetToken: string };
  t.equal((await call(gw, 'GET', '/auth/mfa', undefined, dev.token)).status, 401, "the member's session ended");
  t.equal((await call(gw, 'GET', '/auth/mfa', undefined, owner)).status, 200, "the owner's stays");
  t.equal((await call(gw, 'POST', '/auth/password/reset', { resetToken, newPassword: 'set-by-the-member-itself' })).status, 204, "the token sets the member's password");
  t.ok(await gw.login(dev.email, 'set-by-the-member-itself'), 'the member logs in with it');
  t.ok(await gw.login(org.email, org.password), "the organization's password untouched");

  const status = await runCli(['org', 'mfa', org.id, '--member', dev.id], env);
  t.equal(status.code, 0, `exits 0 (stderr: ${status.stderr})`);
  t.match(JSON.parse(status.stdout), { totp: { enabled: false }, passkeys: [] });
  const removed = await runCli(['org', 'remove-mfa', org.id, '--member', dev.id], env);
  t.strictSame(JSON.parse(removed.stdout), { removed: false, sessionsEnded: 0 }, 'nothing to remove');
  const unknown = await runCli(['org', 'reset-password', org.id, '--member', 'mem_nobody'], env);
  t.equal(unknown.code, 1, 'an unknown member: the gateway\'s 404');
  t.match(unknown.stderr, /404/);
  t.equal((await runCli(['keys', 'list', '--org', org.id, '--member', dev.id], env)).code, 2, '--member is no flag of keys list');
});
