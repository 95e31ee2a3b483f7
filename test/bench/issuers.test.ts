/**
 * Issue 49's bench rows (bench/issuers.ts): the bench's own identity provider is one a real
 * gateway trusts. Its routes file loads as the gateway loads it (today's two routes, each also
 * taking `issuer:bench`), and its RS256 and ES256 tokens, once the organization's external id is
 * set through the admin API, are taken on the public port with the organization injected upstream:
 * what the bench checks before load, here against a gateway in-process over loopback.
 */
import t from 'tap';
import { BENCH_ISSUER_NAME, issuersUnsupported, providerTokens, startBenchIssuer } from '../../bench/issuers.js';
import { loadRoutesText } from '../../src/route-table/load.js';
import { ADMIN_TOKEN, startGateway, UA } from '../helpers/gateway.js';
import { startRecordingUpstream } from '../helpers/upstream.js';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

t.test('the bench issuer\'s tokens are taken by a gateway loading its routes file', async (t) => {
  const issuer = await startBenchIssuer();
  t.teardown(() => issuer.close());
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const loaded = loadRoutesText(issuer.routesFile, 'routes-issuers.yaml', { defaultUpstreamUrl: upstream.url, upstreamTimeoutMs: 5000, defaultAudience: undefined });
  t.ok(loaded.ok, JSON.stringify(loaded.ok ? [] : loaded.errors));
  if (!loaded.ok) return;
  t.same([...loaded.table.issuers.keys()], [BENCH_ISSUER_NAME]);
  t.same(loaded.table.issuers.get(BENCH_ISSUER_NAME)?.algorithms, ['RS256', 'ES256']);
  for (const route of loaded.table.routes) {
    t.ok(route.credentials.kind === 'bearer' && route.credentials.loginToken && route.credentials.apiKey && route.credentials.issuers.has(BENCH_ISSUER_NAME), `${route.id}: login token, API key and the bench issuer`);
  }

  const gw = await startGateway(t, { upstream, deps: { routes: loaded.table } });
  const org = await gw.createOrganization();
  const tokens = await providerTokens(issuer, gw, ADMIN_TOKEN, org.id);
  for (const [name, token] of Object.entries(tokens)) {
    const answer = await gw.get('/accounts', { ...UA, authorization: `Bearer ${token}` });
    t.equal(answer.status, 200, `${name}: taken`);
    t.equal(upstream.requests.at(-1)!.headers['x-organization-id'], org.id, `${name}: the organization injected`);
  }
  t.not(tokens.providerRs256, tokens.providerEs256);
  t.match(JSON.parse(Buffer.from(tokens.providerEs256.split('.')[0]!, 'base64url').toString()), { alg: 'ES256', typ: 'at+jwt' });
});

t.test('a build without trusted issuers is skipped with a reason', async (t) => {
  const dist = mkdtempSync(join(tmpdir(), 'authgate-bench-issuers-'));
  t.teardown(() => rmSync(dist, { recursive: true, force: true }));
  mkdirSync(join(dist, 'config'));
  writeFileSync(join(dist, 'config', 'settings.js'), "export const settings = [{ name: 'AUTHGATE_ROUTES_FILE' }];\n");
  t.match(issuersUnsupported(join(dist, 'main.js')), /no trusted issuers/);
  mkdirSync(join(dist, 'issuers'));
  writeFileSync(join(dist, 'issuers', 'registry.js'), '');
  t.equal(issuersUnsupported(join(dist, 'main.js')), undefined);
});
