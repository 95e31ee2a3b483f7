/**
 * GET /admin/organizations (issue 27): the organizations a page at a time, searched by e-mail or
 * name prefix, on both stores; and `authgate org list`, the CLI over it.
 */
import t, { type Test } from 'tap';
import { randomBytes } from 'node:crypto';
import { ADMIN_TOKEN, send, startGateway, type StartedGateway } from '../helpers/gateway.js';
import { runCli } from '../helpers/cli.js';
import { startRedis } from '../helpers/redis.js';

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

async function listing(t: Test, gw: StartedGateway) {
  const run = randomBytes(4).toString('hex');
  const made: { id: string; email: string; name: string }[] = [];
  for (const [name, email] of [
    [`Acme ${run}`, `b-${run}@acme.test`],
    [`acme ${run} labs`, `a-${run}@acme.test`],
    [`Globex ${run}`, `c-${run}@globex.test`],
  ] as const) {
    const org = await gw.createOrganization({ name, email: email.toUpperCase() });
    made.push({ id: org.id, email, name });
  }
  const get = (query: string) => send(`${gw.opsUrl}/admin/organizations${query}`, { headers: admin });

  // Every page of the whole listing: ours in e-mail order, each once, with their views.
  const seen: { id: string; email: string; name: string; rateLimit: unknown; effectiveRateLimit: unknown; createdAt: string }[] = [];
  let cursor: string | null = null;
  do {
    const res = await get(`?limit=1${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
    t.equal(res.status, 200);
    const body = res.json();
    t.ok(body.organizations.length <= 1, 'at most limit per page');
    seen.push(...body.organizations);
    cursor = body.nextCursor;
  } while (cursor !== null);
  const ours = seen.filter((o) => made.some((m) => m.id === o.id));
  t.strictSame(ours.map((o) => o.email), [`a-${run}@acme.test`, `b-${run}@acme.test`, `c-${run}@globex.test`], 'in e-mail order (normalized)');
  t.match(ours[0], { id: made[1]!.id, name: made[1]!.name, rateLimit: null, effectiveRateLimit: null, createdAt: String });
  t.notOk('passwordHash' in ours[0]!, 'never the password hash');

  const byEmail = await get(`?email=${encodeURIComponent(`  B-${run}@ACME.test `)}`);
  t.strictSame(byEmail.json().organizations.map((o: { id: string }) => o.id), [made[0]!.id], 'an e-mail, normalized');
  t.equal(byEmail.json().nextCursor, null);
  const byName = await get(`?namePrefix=${encodeURIComponent(`ACME ${run}`)}&limit=500`);
  t.strictSame(byName.json().organizations.map((o: { id: string }) => o.id), [made[0]!.id, made[1]!.id], 'a name prefix, case-insensitive, in name order');
  t.strictSame((await get(`?namePrefix=zz-${run}`)).json(), { organizations: [], nextCursor: null }, 'no match');

  for (const [query, detail] of [
    [`?email=a@b.test&namePrefix=A`, /email or by namePrefix, not both/],
    ['?cursor=not-a-cursor', /cursor/],
    ['?limit=0', /limit must be a whole number from 1 to 500/],
    ['?sort=name', /querystring must NOT have additional properties/],
  ] as const) {
    const res = await get(query);
    t.equal(res.status, 400, `${query}: 400`);
    t.equal(res.json().code, 1200);
    t.match(res.json().detail, detail, res.json().detail);
  }
  t.equal((await send(`${gw.opsUrl}/admin/organizations`)).status, 401, 'the admin token is needed');

  // The CLI: every page, as one JSON list; the searches as options.
  const env = { AUTHGATE_ADMIN_TOKEN: ADMIN_TOKEN, AUTHGATE_ADMIN_URL: gw.opsUrl };
  const all = await runCli(['org', 'list'], env);
  t.equal(all.code, 0, all.stderr);
  const listed = JSON.parse(all.stdout).organizations as { id: string }[];
  for (const m of made) t.ok(listed.some((o) => o.id === m.id), `org list shows ${m.name}`);
  const named = await runCli(['org', 'list', '--name-prefix', `globex ${run}`], env);
  t.strictSame(JSON.parse(named.stdout).organizations.map((o: { id: string }) => o.id), [made[2]!.id], 'org list --name-prefix');
  const mailed = await runCli(['org', 'list', '--email', `a-${run}@acme.test`], env);
  t.strictSame(JSON.parse(mailed.stdout).organizations.map((o: { id: string }) => o.id), [made[1]!.id], 'org list --email');
  const both = await runCli(['org', 'list', '--email', 'a@b.test', '--name-prefix', 'x'], env);
  t.equal(both.code, 2, 'both searches: a usage error, nothing sent');
  const extra = await runCli(['org', 'list', 'org_1'], env);
  t.equal(extra.code, 2, 'no positional argument');
}

t.test('memory store', async (t) => {
  const gw = await startGateway(t);
  await listing(t, gw);
});

t.test('Redis store', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const gw = await startGateway(t, { env: { AUTHGATE_STORE: 'redis', AUTHGATE_REDIS_URL: redis.url } });
  await listing(t, gw);
});
