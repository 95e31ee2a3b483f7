// Issue 49: an organization's external ids at the routes file's trusted issuers from the CLI
// (`authgate org external-ids|set-external-id|remove-external-id`), against a real gateway whose
// table declares two issuers: set, shown, unique per issuer (the gateway's 409), an issuer the file
// does not declare (the gateway's 400), removed; usage errors send nothing.
import t from 'tap';
import { runCli as cli } from '../helpers/cli.js';
import type { RoutesFile } from '../../src/route-table/types.js';
import { ADMIN_TOKEN, startGateway } from '../helpers/gateway.js';
import { tableOf } from '../helpers/routes.js';
import { startRecordingUpstream } from '../helpers/upstream.js';


// Keys from a port nothing listens on: the issuers are declared, never reached (nothing here sends a token).
const FILE: RoutesFile = {
  version: 1,
  scopes: { 'orders:read': 'Read orders' },
  issuers: {
    corp: { issuer: 'http://127.0.0.1:1/corp', audiences: ['https://api.example.test'], organization: { claim: 'org_id' } },
    partner: { issuer: 'http://127.0.0.1:1/partner', audiences: ['https://api.example.test'], organization: { claim: 'tenant' } },
  },
  routes: [{ id: 'orders', path: '/orders', match: 'subtree', credentials: ['api_key', 'issuer:corp', 'issuer:partner'], methods: { GET: 'orders:read' } }],
};

t.test('org set-external-id, external-ids, remove-external-id against a real gateway', async (t) => {
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const gw = await startGateway(t, { upstream, deps: { routes: tableOf(FILE, upstream.url) } });
  const env = { AUTHGATE_ADMIN_URL: gw.opsUrl, AUTHGATE_ADMIN_TOKEN: ADMIN_TOKEN };
  const org = await gw.createOrganization();
  const other = await gw.createOrganization();

  const none = await cli(['org', 'external-ids', org.id], env);
  t.equal(none.code, 0, none.stderr);
  t.same(JSON.parse(none.stdout), { id: org.id, externalIds: {} }, 'none yet');

  const set = await cli(['org', 'set-external-id', org.id, 'corp', 'org_8Xq2'], env);
  t.equal(set.code, 0, set.stderr);
  t.match(JSON.parse(set.stdout), { id: org.id, externalIds: { corp: 'org_8Xq2' } }, 'prints the organization');
  t.equal((await cli(['org', 'set-external-id', org.id, 'partner', 'org_8Xq2'], env)).code, 0, 'the same value at another issuer');
  const shown = await cli(['org', 'external-ids', org.id], env);
  t.same(JSON.parse(shown.stdout), { id: org.id, externalIds: { corp: 'org_8Xq2', partner: 'org_8Xq2' } });

  const taken = await cli(['org', 'set-external-id', other.id, 'corp', 'org_8Xq2'], env);
  t.equal(taken.code, 1, 'unique per issuer: the gateway refuses');
  t.match(taken.stderr, /409/);
  const undeclared = await cli(['org', 'set-external-id', other.id, 'nobody', 'org_1'], env);
  t.equal(undeclared.code, 1, 'an issuer the routes file does not declare');
  t.match(undeclared.stderr, /400/);
  t.same(JSON.parse((await cli(['org', 'external-ids', other.id], env)).stdout).externalIds, {}, 'neither refusal changed anything');

  const removed = await cli(['org', 'remove-external-id', org.id, 'corp'], env);
  t.equal(removed.code, 0, removed.stderr);
  t.same(JSON.parse((await cli(['org', 'external-ids', org.id], env)).stdout).externalIds, { partner: 'org_8Xq2' }, 'only that issuer\'s removed');
  t.equal((await cli(['org', 'set-external-id', other.id, 'corp', 'org_8Xq2'], env)).code, 0, 'the id is free again at that issuer');

  t.equal((await cli(['org', 'external-ids', 'org_missing'], env)).code, 1, 'an unknown organization: 404');
  t.equal((await cli(['org', 'set-external-id', org.id, 'corp'], env)).code, 2, 'a usage error without the external id');
  t.equal((await cli(['org', 'remove-external-id', org.id], env)).code, 2, 'a usage error without the issuer');
  const asFlag = await cli(['org', 'external-ids', '--org', org.id], env);
  t.equal(asFlag.code, 2);
  t.match(asFlag.stderr, /the id is an argument/);
});
