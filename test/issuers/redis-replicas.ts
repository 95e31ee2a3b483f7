// Two replicas on one Redis serving one routes file with trusted issuers, and an organization
// mapped through A to an external id at the issuer `corp`: what the provider-token tests on Redis
// (JWT and introspected) both start from.
import type { Test } from 'tap';
import type { RoutesFile } from '../../src/route-table/types.js';
import { ADMIN_TOKEN, eventually, send, startGateway, type StartedGateway } from '../helpers/gateway.js';
import { tableOf } from '../helpers/routes.js';
import type { startRecordingUpstream } from '../helpers/upstream.js';

export async function replicasWithMappedOrganization(
  t: Test,
  options: Readonly<{ redisUrl: string; file: RoutesFile; upstream: Awaited<ReturnType<typeof startRecordingUpstream>>; externalId: string }>,
): Promise<{ a: StartedGateway; b: StartedGateway; org: Awaited<ReturnType<StartedGateway['createOrganization']>> }> {
  const { redisUrl, file, upstream, externalId } = options;
  // A cache TTL far above the test: only the revocation message can explain a refusal.
  const env = { AUTHGATE_REDIS_URL: redisUrl, AUTHGATE_CACHE_TTL_SECONDS: '300' };
  const a = await startGateway(t, { env, upstream, deps: { routes: tableOf(file, upstream.url) } });
  const b = await startGateway(t, { env, upstream, deps: { routes: tableOf(file, upstream.url) } });
  for (const gw of [a, b]) t.ok(await eventually(async () => (await send(`${gw.opsUrl}/readyz`)).status === 200, 10_000, 50), 'ready');
  const org = await a.createOrganization();
  const patched = await send(`${a.opsUrl}/admin/organizations/${org.id}`, { method: 'PATCH', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ externalIds: { corp: externalId } }) });
  t.equal(patched.status, 200, patched.body);
  return { a, b, org };
}
