import t from 'tap';
import { runCli } from '../helpers/cli.js';
import { ADMIN_TOKEN, send, startGateway, UA } from '../helpers/gateway.js';

/**
 * `authgate org update` and `authgate org reset-password` (issue 31) as shipped
 * (dist/cli/authgate.js, built first) against a real gateway on free ports.
 */


t.test('org update changes name and e-mail; org reset-password prints a token that works once', async (t) => {
  const gw = await startGateway(t);
  const env = { AUTHGATE_ADMIN_URL: gw.opsUrl, AUTHGATE_ADMIN_TOKEN: ADMIN_TOKEN };
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);

  const renamed = await runCli(['org', 'update', org.id, '--name', 'Renamed by CLI'], env);
  t.equal(renamed.code, 0, `exits 0 (stderr: ${renamed.stderr})`);
  t.match(JSON.parse(renamed.stdout), { id: org.id, name: 'Renamed by CLI', email: org.email });
  const email = `cli-moved-${process.pid}@example.test`;
  const moved = await runCli(['org', 'update', org.id, '--email', email], env);
  t.equal(moved.code, 0, `exits 0 (stderr: ${moved.stderr})`);
  t.match(JSON.parse(moved.stdout), { id: org.id, name: 'Renamed by CLI', email });
  t.equal((await gw.get('/auth/api-key', { authorization: `Bearer ${token}` })).status, 401, 'an e-mail change ends the sessions');

  const neither = await runCli(['org', 'update', org.id], env);
  t.equal(neither.code, 2, 'neither --name nor --email: a usage error');
  t.match(neither.stderr, /--name, --email or both/);
  t.equal((await runCli(['org', 'update', '--name', 'x'], env)).code, 2, 'no id: a usage error');
  const other = await gw.createOrganization();
  const taken = await runCli(['org', 'update', org.id, '--email', other.email], env);
  t.equal(taken.code, 1, "another's e-mail: the gateway's 409");
  t.match(taken.stderr, /409/);

  const reset = await runCli(['org', 'reset-password', org.id], env);
  t.equal(reset.code, 0, `exits 0 (stderr: ${reset.stderr})`);
  const { resetToken, expiresAt } = JSON.parse(reset.stdout) as { resetToken: string; expiresAt: string };
  t.match(resetToken, /^agr_/);
  t.ok(Date.parse(expiresAt) > Date.now());
  const use = (newPassword: string) =>
    send(`${gw.publicUrl}/auth/password/reset`, { method: 'POST', headers: { ...UA, 'content-type': 'application/json' }, body: JSON.stringify({ resetToken, newPassword }) });
  t.equal((await use('a new one, set by the organization itself')).status, 204, 'the token works');
  t.equal((await use('and another one, which must not be taken')).status, 400, 'once');
  t.ok(await gw.login(email, 'a new one, set by the organization itself'), 'the new password logs in with the new e-mail');
  t.equal((await runCli(['org', 'reset-password', 'org_missing'], env)).code, 1, 'an unknown organization: 404');
  t.equal((await runCli(['org', 'reset-password'], env)).code, 2, 'no id: a usage error');
});
