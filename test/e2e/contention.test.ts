import t, { type Test } from 'tap';
import { eventually, send, startGateway, UA, type Response, type StartedGateway } from '../helpers/gateway.js';
import { startRedis } from '../helpers/redis.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

/**
 * Contention is not an outage (issue 26): parallel changes of one key (PATCH, roll), sent over
 * loopback to two replicas sharing one real Redis, and to one gateway on the memory store, each
 * take one atomic step in the store. They all succeed in some order, or are refused for what
 * they ask against the key as it then is (400 for a widening, 404 for a key a roll deleted);
 * never 503, and the store error metric (which pages operators) does not move.
 */

const json = { ...UA, 'content-type': 'application/json' };
const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });
const BURST = 24;

type Replicas = { gateways: StartedGateway[]; token: string; orgId: string };

async function onRedis(t: Test): Promise<Replicas> {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  // A generous command timeout: a busy machine must not turn a slow answer into the 503 under test.
  const options = { upstream, env: { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_REDIS_TIMEOUT_MS: '5000' } };
  const gateways = [await startGateway(t, options), await startGateway(t, options)];
  for (const gw of gateways) {
    const ready = await eventually(async () => {
      const res = await send(`${gw.opsUrl}/readyz`);
      return res.status === 200 && res.json().invalidation === 'subscribed';
    }, 15_000, 25);
    if (!ready) throw new Error('a replica never became ready');
  }
  const org = await gateways[0]!.createOrganization();
  return { gateways, token: await gateways[1]!.login(org.email, org.password), orgId: org.id };
}

async function onMemory(t: Test): Promise<Replicas> {
  const gw = await startGateway(t);
  const org = await gw.createOrganization();
  return { gateways: [gw], token: await gw.login(org.email, org.password), orgId: org.id };
}

/** The sum of every series of authgate_store_errors_total on the replicas. */
async function storeErrors(gateways: readonly StartedGateway[]): Promise<number> {
  let sum = 0;
  for (const gw of gateways) {
    for (const line of (await send(`${gw.opsUrl}/metrics`)).body.split('\n')) {
      if (line.startsWith('authgate_store_errors_total{')) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return sum;
}

/** request i goes to replica i % n, all at once. */
function burst(gateways: readonly StartedGateway[], make: (i: number) => { method: string; path: string; body?: unknown }, token: string): Promise<Response[]> {
  return Promise.all(Array.from({ length: BURST }, (_, i) => {
    const { method, path, body } = make(i);
    const gw = gateways[i % gateways.length]!;
    return send(`${gw.publicUrl}${path}`, { method, headers: { ...json, ...bearer(token) }, ...(body !== undefined && { body: JSON.stringify(body) }) });
  }));
}

async function createKey(gw: StartedGateway, token: string, body: object = {}): Promise<{ id: string; apiKey: string }> {
  const res = await send(`${gw.publicUrl}/auth/api-key`, { method: 'POST', headers: { ...json, ...bearer(token) }, body: JSON.stringify(body) });
  if (res.status !== 201) throw new Error(`create key: ${res.status} ${res.body}`);
  return res.json() as { id: string; apiKey: string };
}

const statuses = (answers: readonly Response[]) => answers.map((res) => res.status);

for (const [label, open] of [['two replicas on one Redis', onRedis], ['the memory store', onMemory]] as const) {
  t.test(`${label}: ${BURST} parallel renames of one key all answer 200, none 503, no store error`, async (t) => {
    const { gateways, token } = await open(t);
    const key = await createKey(gateways[0]!, token, { name: 'before' });
    const errorsBefore = await storeErrors(gateways);
    const answers = await burst(gateways, (i) => ({ method: 'PATCH', path: `/auth/api-key/${key.id}`, body: { name: `rename ${i}` } }), token);
    t.same(statuses(answers), Array(BURST).fill(200), answers.find((res) => res.status !== 200)?.body ?? 'every rename 200');
    answers.forEach((res, i) => t.equal(res.json().name, `rename ${i}`, `rename ${i} answers the name it set`));
    const shown = await send(`${gateways[0]!.publicUrl}/auth/api-key/${key.id}`, { headers: { ...UA, ...bearer(token) } });
    t.match(shown.json().name, /^rename \d+$/, 'the key has one of the names');
    t.equal(await storeErrors(gateways), errorsBefore, 'authgate_store_errors_total did not move');
  });

  t.test(`${label}: parallel narrowing of scopes and expiry holds against the stored key, never widens, and every replica learns it`, async (t) => {
    const { gateways, token } = await open(t);
    const key = await createKey(gateways[0]!, token);
    for (const gw of gateways) t.equal((await gw.get('/auth/api-key', bearer(key.apiKey))).status, 200, 'the all-scope key works, and is cached, on each replica');
    const errorsBefore = await storeErrors(gateways);
    const base = Date.now() + 30 * 24 * 3600_000;
    const ends = Array.from({ length: BURST }, (_, i) => new Date(base + ((i * 7) % BURST) * 60_000).toISOString());
    // A third each: keys:read and accounts:read (refused once a narrower one applied), accounts:read
    // only (always narrower), an end (refused once an earlier one applied).
    const answers = await burst(gateways, (i) => ({
      method: 'PATCH',
      path: `/auth/api-key/${key.id}`,
      body: [{ scopes: ['accounts:read', 'keys:read'] }, { scopes: ['accounts:read'] }, { expiresAt: ends[i] }][i % 3],
    }), token);
    const narrowest = answers.filter((_res, i) => i % 3 === 1);
    t.same(statuses(narrowest), Array(narrowest.length).fill(200), narrowest.find((res) => res.status !== 200)?.body ?? 'every narrowing to accounts:read is 200');
    for (const [i, res] of answers.entries()) {
      if (res.status === 200) continue;
      t.equal(res.status, 400, `a widening against the stored key is 400, not ${res.status}: ${res.body}`);
      t.match(res.json(), { code: 1200, detail: i % 3 === 0 ? /scopes can only be narrowed/ : /expiry can only be moved earlier/ });
    }
    // The earliest end asked for always applies, and no later one can undo it.
    const earliest = ends.filter((_end, i) => i % 3 === 2).sort()[0];
    const shown = (await send(`${gateways[0]!.publicUrl}/auth/api-key/${key.id}`, { headers: { ...UA, ...bearer(token) } })).json();
    t.same(shown.scopes, ['accounts:read'], 'the key holds the narrowest scopes');
    t.equal(shown.expiresAt, earliest, 'and the earliest end');
    for (const gw of gateways) {
      t.ok(await eventually(async () => (await gw.get('/auth/api-key', bearer(key.apiKey))).status === 403, 15_000, 25), 'every replica refuses keys:read now');
    }
    t.equal(await storeErrors(gateways), errorsBefore, 'authgate_store_errors_total did not move');
  });

  t.test(`${label}: parallel rolls of one key with a grace all succeed, one after another; with no grace one wins and the others find no key`, async (t) => {
    const { gateways, token } = await open(t);
    const key = await createKey(gateways[0]!, token, { name: 'rolled often', scopes: ['accounts:read', 'keys:read'] });
    const errorsBefore = await storeErrors(gateways);
    const answers = await burst(gateways, () => ({ method: 'POST', path: `/auth/api-key/${key.id}/roll`, body: { graceSeconds: 3600 } }), token);
    t.same(statuses(answers), Array(BURST).fill(201), answers.find((res) => res.status !== 201)?.body ?? 'every roll 201');
    const successors = answers.map((res) => res.json() as { id: string; apiKey: string; name: string; scopes: string[]; rolled: { id: string; expiresAt: string } });
    t.equal(new Set(successors.map((s) => s.id)).size, BURST, 'each roll made its own successor');
    for (const successor of successors) t.match(successor, { name: 'rolled often', scopes: ['accounts:read', 'keys:read'], rolled: { id: key.id } });
    const listed = (await send(`${gateways[1 % gateways.length]!.publicUrl}/auth/api-key?limit=100`, { headers: { ...UA, ...bearer(token) } })).json();
    t.equal(listed.keys.length, BURST + 1, 'the rolled key and every successor are listed');
    for (const gw of gateways) t.equal((await gw.get('/auth/api-key', bearer(successors[BURST - 1]!.apiKey))).status, 200, 'a successor works on each replica');

    const once = await createKey(gateways[0]!, token);
    const revoking = await burst(gateways, () => ({ method: 'POST', path: `/auth/api-key/${once.id}/roll`, body: { graceSeconds: 0 } }), token);
    t.equal(revoking.filter((res) => res.status === 201).length, 1, 'one roll with no grace wins');
    for (const res of revoking.filter((answer) => answer.status !== 201)) {
      t.equal(res.status, 404, `the others find the key gone: ${res.body}`);
      t.equal(res.json().code, 1301);
    }
    for (const gw of gateways) t.ok(await eventually(async () => (await gw.get('/auth/api-key', bearer(once.apiKey))).status === 401, 15_000, 25), 'the rolled key is refused on each replica');
    t.equal(await storeErrors(gateways), errorsBefore, 'authgate_store_errors_total did not move');
  });
}
