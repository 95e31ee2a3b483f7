import t from 'tap';
import type { Pool } from 'undici';
import { createUpstreamPools } from '../../src/proxy/upstream-pools.js';
import { createLiveRouteTable } from '../../src/route-table/live.js';
import type { RoutesFile } from '../../src/route-table/types.js';
import { tableOf } from '../helpers/routes.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

/**
 * proxy/upstream-pools.ts: a pool per upstream origin of the live table, opened as a table naming
 * it is swapped in, closed once no table names it (after a grace), a request in flight on it
 * finishing first. Real upstreams on loopback.
 */

const fileTo = (url: string): RoutesFile => ({ version: 1, upstreams: { default: { url } }, routes: [{ id: 'r', path: '/r', match: 'exact', credentials: 'none', methods: { GET: 'public' } }] });

t.test('pools follow the swaps; a request held across one completes on the old pool, which closes after', async (t) => {
  const a = await startRecordingUpstream();
  const b = await startRecordingUpstream();
  t.teardown(async () => {
    await a.close();
    await b.close();
  });
  const live = createLiveRouteTable(tableOf(fileTo(a.url), a.url));
  const pools = createUpstreamPools(live, { retireAfterMs: 50 });
  t.teardown(() => pools.close());
  const get = (upstream: Parameters<typeof pools.poolOf>[0], path: string) => pools.poolOf(upstream).request({ method: 'GET', path }).then((res) => res.body.text());

  const before = live.current().upstreams.get('default')!;
  const oldPool = pools.poolOf(before) as Pool;
  t.match(await get(before, '/one'), /"url":"\/one"/, 'the first table\'s upstream');

  const release = a.holdAnswers();
  const held = get(before, '/held');
  await t.resolves(waitUntil(() => a.requests.some((r) => r.url === '/held')), 'the held request reached A');
  live.swap(tableOf(fileTo(b.url), b.url));
  const after = live.current().upstreams.get('default')!;
  t.not(pools.poolOf(after), oldPool, 'the new upstream has a pool of its own');
  t.match(await get(after, '/two'), /"url":"\/two"/, 'and is reached');
  t.equal(b.requests.length, 1);
  await new Promise((resolve) => setTimeout(resolve, 120)); // past the grace: the old pool is closing, its request still held
  release();
  t.match(await held, /"url":"\/held"/, 'the request held across the swap completed on the old pool');
  await t.resolves(waitUntil(() => oldPool.closed), 'the retired pool is closed');
  t.equal(a.requests.length, 2, 'A saw only what was sent before the swap');
});

async function waitUntil(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !check(); ) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
