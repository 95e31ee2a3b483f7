/**
 * Issue 45 on the public port: a path a common server reads as a credentialed route's path is
 * never decided by the public `/` subtree around it. Raw bytes on a socket to a real gateway in
 * front of a real upstream, each request twice: on the fast lane (proxy/fast-path.ts) and, with
 * an Origin, on the framework's path (proxy/forward.ts); what reached the upstream is the proof.
 */
import t, { type Test } from 'tap';
import type { RoutesFile } from '../../src/route-table/types.js';
import { send, startGateway, UA } from '../helpers/gateway.js';
import { PUBLIC_ROOT_ROUTES, rawGet, REFUSED_PATHS, STRONG_SPELLINGS } from '../helpers/path-readings.js';
import { tableOf } from '../helpers/routes.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

/** Both ways in: the fast lane takes no request with an Origin (fastify's path answers CORS). */
const WAYS: [string, [string, string][]][] = [
  ['fast lane', []],
  ['framework', [['Origin', 'http://elsewhere.example']]],
];

async function start(t: Test, file: RoutesFile) {
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const gw = await startGateway(t, { upstream, deps: { routes: tableOf(file, upstream.url) } });
  const port = Number(new URL(gw.publicUrl).port);
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  // A key that may do everything, and one that may only read accounts.
  const full = (await gw.createApiKey(token)).apiKey;
  const limited = await send(`${gw.publicUrl}/auth/api-key`, {
    method: 'POST',
    headers: { ...UA, authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ scopes: ['accounts:read'] }),
  });
  const accountsOnly = limited.json().apiKey as string;
  return { upstream, port, full, accountsOnly };
}

t.test('public port, public / subtree: ";" and "//" refused, case and slash spellings decided by the route they spell', async (t) => {
  const { upstream, port, full, accountsOnly } = await start(t, PUBLIC_ROOT_ROUTES);

  // The public route is forwarded without a credential: what follows is refused on purpose.
  for (const [way, extra] of WAYS) t.equal((await rawGet(port, '/about', extra)).status, 200, `${way}: a public path is forwarded`);
  t.equal((await rawGet(port, '/api/docs')).status, 200, 'the public /api/docs as declared is forwarded');
  upstream.requests.length = 0;

  for (const [way, extra] of WAYS) {
    for (const target of REFUSED_PATHS) {
      for (const [who, credential] of [['no credential', undefined], ['a key with every scope', full], ['a key with accounts:read only', accountsOnly]] as const) {
        const headers: [string, string][] = credential === undefined ? extra : [...extra, ['Authorization', `Bearer ${credential}`]];
        const res = await rawGet(port, target, headers);
        t.equal(res.status, 400, `${way}, ${who}: ${target} is refused`);
        t.equal(res.code, 1240, `${way}, ${who}: ${target}: problem 1240`);
        t.match(res.contentType, /application\/problem\+json/, `${way}: ${target}: a problem body`);
      }
    }
  }
  t.same(upstream.requests.map((r) => r.url), [], 'the upstream saw none of the refused paths');

  for (const [way, extra] of WAYS) {
    for (const target of STRONG_SPELLINGS) {
      upstream.requests.length = 0;
      t.equal((await rawGet(port, target, extra)).status, 401, `${way}: ${target} without a credential: the route it spells asks for one`);
      t.equal((await rawGet(port, target, [...extra, ['Authorization', `Bearer ${accountsOnly}`]])).status, 403, `${way}: ${target} with accounts:read only: that route's scope`);
      t.same(upstream.requests.map((r) => r.url), [], `${way}: ${target}: nothing forwarded unauthorized`);
      t.equal((await rawGet(port, target, [...extra, ['Authorization', `Bearer ${full}`]])).status, 200, `${way}: ${target} with the route's scope: forwarded`);
      t.same(upstream.requests.map((r) => r.url), [target], `${way}: ${target}: forwarded as sent`);
      t.equal(upstream.requests[0]?.headers['x-organization-id'] !== undefined, true, `${way}: ${target}: with the organization's identity (a credentialed route's)`);
    }
  }
});

t.test('public port, paths: { parameters: strip, emptySegments: merge }: the servlet reading decides, the path is forwarded as sent', async (t) => {
  const { upstream, port, full, accountsOnly } = await start(t, { ...PUBLIC_ROOT_ROUTES, paths: { parameters: 'strip', emptySegments: 'merge' } });
  for (const [way, extra] of WAYS) {
    for (const target of ['/admin;x/users', '/admin;jsessionid=1/users', '//admin/users', '/admin//users']) {
      upstream.requests.length = 0;
      t.equal((await rawGet(port, target, extra)).status, 401, `${way}: ${target} is /admin's: a credential is needed`);
      t.same(upstream.requests, [], `${way}: ${target}: nothing forwarded`);
      t.equal((await rawGet(port, target, [...extra, ['Authorization', `Bearer ${full}`]])).status, 200, `${way}: ${target} with admin:read`);
      t.same(upstream.requests.map((r) => r.url), [target], `${way}: ${target}: forwarded as sent`);
    }
    upstream.requests.length = 0;
    // `..;` is `..` to a server that drops parameters: still refused.
    const res = await rawGet(port, '/accounts/..;/organization/me', [...extra, ['Authorization', `Bearer ${accountsOnly}`]]);
    t.equal(res.status, 400, `${way}: /accounts/..;/organization/me is refused`);
    t.equal(res.code, 1240);
    t.same(upstream.requests, [], `${way}: nothing forwarded`);
  }
});
