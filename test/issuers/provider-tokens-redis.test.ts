// Provider tokens (issue 49) on Redis with two replicas: an external id set through A maps B's
// tokens; the organization deleted through A is refused by B at once (the `organization`
// revocation the deletion script announces), far within the credential cache's TTL.
import t from 'tap';
import type { RoutesFile } from '../../src/route-table/types.js';
import { ADMIN_TOKEN, eventually, send, UA } from '../helpers/gateway.js';
import { startTestProvider } from '../helpers/oidc-provider.js';
import { startRedis } from '../helpers/redis.js';
import { startRecordingUpstream } from '../helpers/upstream.js';
import { replicasWithMappedOrganization } from './redis-replicas.js';

const API = 'https://api.example.test';

t.test('two replicas on Redis: mapped through A, accepted by B; deleted through A, refused by B at once', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const provider = await startTestProvider();
  t.teardown(() => provider.close());
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const file: RoutesFile = {
    version: 1,
    scopes: { 'orders:read': 'Read orders' },
    issuers: { corp: { issuer: provider.issuer, audiences: [API], organization: { claim: 'org_id' }, requireType: 'at+jwt' } },
    routes: [{ id: 'orders', path: '/orders', match: 'subtree', credentials: ['issuer:corp'], methods: { GET: 'orders:read' } }],
  };
  const { a, b, org } = await replicasWithMappedOrganization(t, { redisUrl: redis.url, file, upstream, externalId: 'org_redis' });
  const token = await provider.token({ org: 'org_redis', resource: API });
  const get = () => send(`${b.publicUrl}/orders/1`, { headers: { ...UA, authorization: `Bearer ${token}` } });
  t.ok(await eventually(async () => (await get()).status === 200, 15_000, 25), 'B accepts the token once its keys arrived');
  t.equal(upstream.requests.at(-1)!.headers['x-organization-id'], org.id);
  t.equal((await get()).status, 200, 'and keeps it (the organization cached on B)');

  t.equal((await send(`${a.opsUrl}/admin/organizations/${org.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status, 204);
  t.ok(await eventually(async () => (await get()).status === 401, 10_000, 5), 'deleted through A: refused by B');
  t.equal((await get()).json().code, 1140);
});
