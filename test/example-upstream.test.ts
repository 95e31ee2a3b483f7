import t from 'tap';
import { startExampleUpstream } from '../src/example-upstream.js';
import { send } from './helpers/gateway.js';

/** example-upstream.ts: development's stand-in resource service, over real loopback HTTP. */

t.test('answers for the organization the gateway names, and only then', async (t) => {
  const upstream = await startExampleUpstream();
  t.teardown(() => upstream.close());
  const org = { 'x-organization-id': 'org_example' };
  const me = await send(`${upstream.url}/organization/me`, { headers: org });
  t.equal(me.status, 200);
  t.match(me.json(), { id: 'org_example' });
  for (const path of ['/accounts', '/accounts/1?x=y']) {
    const accounts = await send(`${upstream.url}${path}`, { headers: org });
    t.equal(accounts.status, 200, path);
    t.equal(accounts.json().accounts[0].organizationId, 'org_example');
  }
  t.equal((await send(`${upstream.url}/accountsx`, { headers: org })).status, 404);
  t.equal((await send(`${upstream.url}/accounts`)).status, 401, 'no organization, no answer');
});
