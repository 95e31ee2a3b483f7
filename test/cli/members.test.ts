// Members in the CLI (issue 50): `authgate org members ID`, `org member-role ID MEMBER ROLE` and
// `org remove-member ID MEMBER [--revoke-keys]` against a real gateway, through its admin API;
// `audit tail --member` reads what one member did.
import t from 'tap';
import { runCli as cli } from '../helpers/cli.js';
import { ADMIN_TOKEN, send, startGateway } from '../helpers/gateway.js';


t.test('org members, member-role and remove-member (with and without --revoke-keys) against a real gateway', async (t) => {
  const gw = await startGateway(t);
  const env = { AUTHGATE_ADMIN_URL: gw.opsUrl, AUTHGATE_ADMIN_TOKEN: ADMIN_TOKEN };
  const org = await gw.createOrganization();
  const owner = await gw.login(org.email, org.password);
  const auth = { authorization: `Bearer ${owner}`, 'content-type': 'application/json', 'user-agent': 'authgate-tests/1.0' };
  const join = async (role: string) => {
    const email = `cli-${role}-${process.pid}@example.test`;
    const invited = await send(`${gw.publicUrl}/auth/invitations`, { method: 'POST', headers: auth, body: JSON.stringify({ email, role }) });
    const accepted = await send(`${gw.publicUrl}/auth/invitations/accept`, { method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': 'authgate-tests/1.0' }, body: JSON.stringify({ token: invited.json().token, password: 'a-member-password-long-enough' }) });
    return { email, token: accepted.json().token as string };
  };
  const dev = await join('developer');
  const keeper = await join('admin');
  const key = await gw.createApiKey(dev.token);

  const listed = await cli(['org', 'members', org.id], env);
  t.equal(listed.code, 0, listed.stderr);
  const members = (JSON.parse(listed.stdout) as { members: Array<{ id: string; email: string; role: string; first: boolean }> }).members;
  t.match(members[0], { id: `mem_${org.id.slice(4)}`, email: org.email, role: 'owner', first: true }, 'the first member first');
  const devId = members.find((m) => m.email === dev.email)!.id;
  const keeperId = members.find((m) => m.email === keeper.email)!.id;

  await gw.gateway.audit.flush();
  const tailed = await cli(['audit', 'tail', '--org', org.id, '--member', devId], env);
  t.equal(tailed.code, 0, tailed.stderr);
  const lines = tailed.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; actorDetail?: { id?: string } });
  t.same(lines.map((e) => e.type), ['member.joined', 'api_key.created'], 'audit tail --member: what that member did, oldest first');
  t.ok(lines.every((e) => e.actorDetail?.id === devId));
  t.equal((await cli(['org', 'members', org.id, '--member', devId], env)).code, 2, '--member is for audit tail');

  const changed = await cli(['org', 'member-role', org.id, devId, 'viewer'], env);
  t.equal(changed.code, 0, changed.stderr);
  t.match(JSON.parse(changed.stdout), { id: devId, role: 'viewer' });
  const badRole = await cli(['org', 'member-role', org.id, devId, 'emperor'], env);
  t.equal(badRole.code, 1, "an unknown role is the gateway's 400");
  const lastOwner = await cli(['org', 'member-role', org.id, members[0]!.id, 'viewer'], env);
  t.equal(lastOwner.code, 1, 'the last owner stays');
  t.match(lastOwner.stderr, /1308|owner/);
  t.equal((await cli(['org', 'member-role', org.id, devId], env)).code, 2, 'a missing role is a usage error');

  const kept = await cli(['org', 'remove-member', org.id, keeperId], env);
  t.equal(kept.code, 0, kept.stderr);
  const removed = await cli(['org', 'remove-member', org.id, devId, '--revoke-keys'], env);
  t.equal(removed.code, 0, removed.stderr);
  const forwarded = await send(`${gw.publicUrl}/auth/scopes`, { headers: { authorization: `Bearer ${key.apiKey}`, 'user-agent': 'authgate-tests/1.0' } });
  t.equal(forwarded.status, 401, "the removed member's key is revoked");
  const after = JSON.parse((await cli(['org', 'members', org.id], env)).stdout) as { members: unknown[] };
  t.equal(after.members.length, 1, 'only the owner is left');
  t.equal((await cli(['org', 'remove-member', org.id, devId], env)).code, 1, 'an unknown member: 404, exit 1');
});
