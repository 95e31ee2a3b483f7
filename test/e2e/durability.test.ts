import { createConnection, createServer, type Server, type Socket } from 'node:net';
import t from 'tap';
import { eventually, send, startGateway, UA, type StartedGateway } from '../helpers/gateway.js';
import { redisCommand, startRedis, waitFor } from '../helpers/redis.js';

/**
 * AUTHGATE_REDIS_WAIT_REPLICAS (issue 26, "Durability"): a real master, a real replica that
 * replicates through a relay the test can hold (so the replica lags exactly when the test says,
 * which no timing could arrange), and the master killed (SIGKILL) right after a write. Every key
 * answered 201 must be on the replica once it is promoted; a write the replica did not
 * acknowledge is answered 503 (1511), never 201.
 */

/** A relay from a replica to its master whose master → replica direction can be held. */
async function replicationRelay(masterPort: number): Promise<{ port: number; hold(): void; release(): void; close(): Promise<void> }> {
  let held = false;
  const buffered: Array<{ to: Socket; chunk: Buffer }> = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((replica) => {
    const master = createConnection({ host: '127.0.0.1', port: masterPort });
    for (const socket of [replica, master]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => sockets.delete(socket));
    }
    replica.on('data', (chunk: Buffer) => master.write(chunk));
    master.on('data', (chunk: Buffer) => (held ? buffered.push({ to: replica, chunk }) : replica.write(chunk)));
    replica.on('close', () => master.destroy());
    master.on('close', () => replica.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as { port: number }).port,
    hold: () => {
      held = true;
    },
    release: () => {
      held = false;
      for (const { to, chunk } of buffered.splice(0)) to.write(chunk);
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });

async function createKey(gw: StartedGateway, token: string) {
  return send(`${gw.publicUrl}/auth/api-key`, { method: 'POST', headers: { ...UA, ...bearer(token) } });
}

async function ready(gw: StartedGateway): Promise<void> {
  if (!(await eventually(async () => (await send(`${gw.opsUrl}/readyz`)).status === 200, 20_000, 50))) throw new Error('not ready');
}

async function storeErrors(gw: StartedGateway, operation: string): Promise<number> {
  const line = (await send(`${gw.opsUrl}/metrics`)).body.split('\n').find((l) => l.startsWith(`authgate_store_errors_total{operation="${operation}"`));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

t.test('with AUTHGATE_REDIS_WAIT_REPLICAS=1, a key answered 201 survives the master killed right after; one the replica did not take is 503 (1511)', async (t) => {
  const master = await startRedis({ appendonly: false });
  t.teardown(() => master.stop());
  const relay = await replicationRelay(master.port);
  t.teardown(() => relay.close());
  const replica = await startRedis({ appendonly: false, args: ['--replicaof', '127.0.0.1', String(relay.port)] });
  t.teardown(() => replica.stop());
  await waitFor('the replica to sync', 20_000, async () => String(await redisCommand(replica.port, 'INFO', 'replication')).includes('master_link_status:up'));

  // WAIT gets half of the command timeout (1 s here): far above a loopback acknowledgement.
  const env = { AUTHGATE_REDIS_URL: master.url, AUTHGATE_REDIS_TIMEOUT_MS: '2000', AUTHGATE_REDIS_WAIT_REPLICAS: '1' };
  const gw = await startGateway(t, { env });
  await ready(gw);
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const first = await createKey(gw, token);
  t.equal(first.status, 201, 'the replica acknowledged: 201');

  relay.hold();
  const errorsBefore = await storeErrors(gw, 'create_api_key');
  const unacknowledged = await createKey(gw, token);
  t.equal(unacknowledged.status, 503, `the replica took nothing: not 201 but 503 (${unacknowledged.body})`);
  t.match(unacknowledged.json(), { code: 1511, title: 'Write not replicated', detail: /may or may not have been kept/ });
  t.equal(await storeErrors(gw, 'create_api_key'), errorsBefore + 1, 'counted in authgate_store_errors_total: writes are failing');
  t.notOk(unacknowledged.body.includes('agk_'), 'no secret in the refusal');

  relay.release();
  const second = await createKey(gw, token);
  t.equal(second.status, 201, 'the replica is back: 201');

  relay.hold();
  const lost = await createKey(gw, token);
  t.equal(lost.status, 503, `held again: 503, not 201 (${lost.body})`);
  await master.kill(); // right after the answer: what the replica did not take is gone

  // What Sentinel would do: the replica becomes the master, and the gateway is sent there.
  await redisCommand(replica.port, 'REPLICAOF', 'NO', 'ONE');
  const after = await startGateway(t, { env: { ...env, AUTHGATE_REDIS_URL: replica.url } });
  await ready(after);
  const answered201 = [first, second, lost].filter((res) => res.status === 201);
  for (const res of answered201) {
    const key = res.json() as { id: string; apiKey: string };
    t.equal((await after.get('/auth/api-key', bearer(key.apiKey))).status, 200, `the key ${key.id}, answered 201, works on the promoted replica`);
  }
  const listed = (await after.get('/auth/api-key?limit=100', bearer(token))).json() as { keys: Array<{ id: string }> };
  const ids = listed.keys.map((key) => key.id);
  t.equal(ids.length, 3, 'the key first answered 503 exists (it reached the replica later): a 503 (1511) write may have been kept; the last did not survive');
});
