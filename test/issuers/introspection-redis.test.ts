// Opaque provider tokens (issue 49, RFC 7662) on Redis with two replicas: an external id set
// through A maps the tokens B introspects; deleting the organization through A refuses them on B
// at once (the `organization` revocation), although B holds the token's active answer.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { RoutesFile } from '../../src/route-table/types.js';
import { ADMIN_TOKEN, eventually, send, UA } from '../helpers/gateway.js';
import { INTROSPECTION_PATH, startTestProvider } from '../helpers/oidc-provider.js';
import { startRedis } from '../helpers/redis.js';
import { startRecordingUpstream } from '../helpers/upstream.js';
import { replicasWithMappedOrganization } from './redis-replicas.js';

const API = 'https://api.example.test';

t.test('two replicas on Redis: mapped through A, introspected and accepted by B; deleted through A, refused by B at once', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const secret = randomBytes(16).toString('hex');
  const provider = await startTestProvider({ introspection: { clientId: 'authgate', clientSecret: secret } });
  t.teardown(() => provider.close());
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const clientSecretFile = join(mkdtempSync(join(tmpdir(), 'authgate-introspection-redis-')), 'secret');
  writeFileSync(clientSecretFile, secret);
  const file: RoutesFile = {
    version: 1,
    scopes: { 'orders:read': 'Read orders' },
    issuers: { corp: { issuer: provider.issuer, audiences: [API], organization: { claim: 'org_id' }, introspection: { url: `${provider.issuer}${INTROSPECTION_PATH}`, clientId: 'authgate', clientSecretFile } } },
    routes: [{ id: 'orders', path: '/orders', match: 'subtree', credentials: ['issuer:corp'], methods: { GET: 'orders:read' } }],
  };
  const { a, b, org } = await replicasWithMappedOrganization(t, { redisUrl: redis.url, file, upstream, externalId: 'org_opaque_redis' });
  const token = await provider.token({ org: 'org_opaque_redis', resource: API });
  const get = (bearer = token) => send(`${b.publicUrl}/orders/1`, { headers: { ...UA, authorization: `Bearer ${bearer}` } });
  const first = await get();
  t.equal(first.status, 200, first.body);
  t.equal(upstream.requests.at(-1)!.headers['x-organization-id'], org.id, 'the organization B found in the shared store');
  t.equal((await get(`opaque-${randomBytes(16).toString('hex')}`)).status, 401, 'an inactive token refused');

  t.equal((await send(`${a.opsUrl}/admin/organizations/${org.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status, 204);
  t.ok(await eventually(async () => (await get()).status === 401, 10_000, 5), 'deleted through A: refused by B');
  t.equal((await get()).json().code, 1140);
});
