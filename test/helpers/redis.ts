/**
 * Real Redis processes for tests: a server, a Sentinel topology or a Cluster, each on free ports
 * of 127.0.0.1 with its own temporary directory, all killed and removed in teardown.
 * redis-server, redis-cli must be on PATH (CI installs them); nothing here is skipped without.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createConnection, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

export type RedisServer = {
  port: number;
  url: string;
  dir: string;
  /** Terminates the server and removes its directory (when this helper made it). */
  stop(): Promise<void>;
  /** SIGKILL: no shutdown, no final AOF flush. */
  kill(): Promise<void>;
  /** Starts it again on the same port with the same directory, stopping it first if it runs. */
  restart(): Promise<void>;
  /** SIGSTOP: the socket stays open but nothing answers, as with a hung or partitioned server. */
  pause(): void;
  /** SIGCONT after pause(). */
  resume(): void;
};

export type RedisOptions = {
  appendonly?: boolean;
  port?: number;
  dir?: string;
  /** More redis-server arguments, e.g. ['--maxmemory-policy', 'allkeys-lru']. */
  args?: string[];
};

const running = new Set<ChildProcess>();
// Last resort when a test dies before its teardown: no redis-server outlives the test process.
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

let checked = false;
function requireRedis(): void {
  if (checked) return;
  for (const binary of ['redis-server', 'redis-cli']) {
    const probe = spawnSync(binary, ['--version'], { encoding: 'utf8' });
    if (probe.error !== undefined || probe.status !== 0) {
      throw new Error(
        `${binary} was not found on PATH. The Redis tests need a real Redis 7 ` +
          `(Debian/Ubuntu: apt-get install redis-server redis-sentinel redis-tools).`,
      );
    }
  }
  checked = true;
}

/** A port nothing listens on right now: the OS picks one, we close it and hand it out. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port);
        else reject(new Error('no port'));
      });
    });
  });
}

export async function startRedis(options: RedisOptions = {}): Promise<RedisServer> {
  requireRedis();
  const port = options.port ?? (await freePort());
  const ownDir = options.dir === undefined;
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'authgate-redis-')));
  const args = [
    '--port', String(port),
    '--bind', '127.0.0.1',
    '--save', '',
    '--appendonly', options.appendonly === true ? 'yes' : 'no',
    '--dir', dir,
    ...(options.args ?? []),
  ];
  let child: ChildProcess | undefined = await launch('redis-server', args, port);

  async function halt(signal: NodeJS.Signals): Promise<void> {
    const current = child;
    child = undefined;
    if (current === undefined) return;
    current.kill('SIGCONT'); // a paused server would not act on SIGTERM
    await terminate(current, signal);
  }

  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    dir,
    async stop() {
      await halt('SIGTERM');
      if (ownDir) await rm(dir, { recursive: true, force: true });
    },
    kill: () => halt('SIGKILL'),
    async restart() {
      await halt('SIGTERM');
      child = await launch('redis-server', args, port);
    },
    pause: () => void child?.kill('SIGSTOP'),
    resume: () => void child?.kill('SIGCONT'),
  };
}

export type SentinelTopology = {
  name: string;
  sentinels: { host: string; port: number }[];
  master: RedisServer;
  replica: RedisServer;
  stop(): Promise<void>;
};

/** A master, one replica and three Sentinels (quorum 2) that already know each other. */
export async function startSentinelTopology(): Promise<SentinelTopology> {
  requireRedis();
  const name = 'authgate-test';
  const master = await startRedis();
  const replica = await startRedis({ args: ['--replicaof', '127.0.0.1', String(master.port)] });
  const dir = await mkdtemp(join(tmpdir(), 'authgate-sentinel-'));
  const sentinels: { host: string; port: number; child: ChildProcess }[] = [];
  const stop = async () => {
    await Promise.all(sentinels.map((s) => terminate(s.child, 'SIGKILL')));
    await Promise.all([master.stop(), replica.stop()]);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      const conf = join(dir, `sentinel-${port}.conf`);
      await writeFile(
        conf,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${name} 127.0.0.1 ${master.port} 2`,
          `sentinel down-after-milliseconds ${name} 1000`,
          `sentinel failover-timeout ${name} 4000`,
          `sentinel parallel-syncs ${name} 1`,
          '',
        ].join('\n'),
      );
      sentinels.push({ host: '127.0.0.1', port, child: await launch('redis-server', [conf, '--sentinel'], port) });
    }
    // Failover needs Sentinels that see each other and the replica; hellos take a few seconds.
    await waitFor('sentinels to discover each other and the replica', 20_000, async () => {
      for (const sentinel of sentinels) {
        const state = pairs(await redisCommand(sentinel.port, 'SENTINEL', 'MASTER', name));
        if (Number(state['num-other-sentinels']) < 2 || Number(state['num-slaves']) < 1) return false;
      }
      return String(await redisCommand(replica.port, 'INFO', 'replication')).includes('master_link_status:up');
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return { name, sentinels: sentinels.map(({ host, port }) => ({ host, port })), master, replica, stop };
}

export type RedisCluster = {
  nodes: { host: string; port: number }[];
  servers: RedisServer[];
  stop(): Promise<void>;
};

/** Three masters, no replicas, every slot assigned, cluster_state:ok on each node. */
export async function startCluster(): Promise<RedisCluster> {
  requireRedis();
  const servers: RedisServer[] = [];
  const stop = async () => {
    await Promise.all(servers.map((server) => server.stop()));
  };
  try {
    for (let i = 0; i < 3; i++) {
      // The cluster bus gets its own free port rather than port + 10000, which may be taken.
      const busPort = await freePort();
      servers.push(
        await startRedis({
          args: [
            '--cluster-enabled', 'yes',
            '--cluster-config-file', 'nodes.conf',
            '--cluster-node-timeout', '2000',
            '--cluster-port', String(busPort),
          ],
        }),
      );
    }
    const create = await run('redis-cli', [
      '--cluster', 'create',
      ...servers.map((server) => `127.0.0.1:${server.port}`),
      '--cluster-replicas', '0',
      '--cluster-yes',
    ]);
    if (create.code !== 0) throw new Error(`redis-cli --cluster create failed:\n${create.output}`);
    await waitFor('cluster_state:ok on every node', 20_000, async () => {
      for (const server of servers) {
        const info = String(await redisCommand(server.port, 'CLUSTER', 'INFO'));
        if (!info.includes('cluster_state:ok') || !info.includes('cluster_known_nodes:3')) return false;
      }
      return true;
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return { nodes: servers.map((server) => ({ host: '127.0.0.1', port: server.port })), servers, stop };
}

/** One command on a fresh connection, for tests to look at or poke a server directly. */
export async function redisCommand(port: number, command: string, ...args: (string | number)[]): Promise<unknown> {
  const client = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    enableReadyCheck: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 2000,
    commandTimeout: 5000,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    return await client.call(command, ...args);
  } finally {
    client.disconnect();
  }
}

/** Polls check() until it returns true; throws with what it waited for after timeoutMs. */
export async function waitFor(what: string, timeoutMs: number, check: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const reason = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${reason}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function pairs(reply: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!Array.isArray(reply)) return out;
  for (let i = 0; i + 1 < reply.length; i += 2) out[String(reply[i])] = String(reply[i + 1]);
  return out;
}

/** Spawns a server and resolves once it answers PING (and is done loading its data). */
async function launch(binary: string, args: string[], port: number): Promise<ChildProcess> {
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited: string | undefined;
  child.on('exit', (code, signal) => {
    running.delete(child);
    exited = `exited with ${signal ?? code}`;
  });
  child.on('error', (error) => {
    exited = error.message;
  });
  try {
    await waitFor(`${binary} on port ${port}`, 10_000, async () => {
      if (exited !== undefined) throw new Error(`${binary} ${exited}:\n${output}`);
      return (await rawPing(port)) === '+PONG';
    });
  } catch (error) {
    await terminate(child, 'SIGKILL');
    throw new Error(`${binary} ${args.join(' ')} did not start: ${String(error)}\n${output}`);
  }
  return child;
}

/** PING without a client library, so a server still loading (-LOADING) counts as not ready. */
function rawPing(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let reply = '';
    const done = (value: string) => {
      socket.destroy();
      resolve(value);
    };
    socket.setTimeout(1000, () => done('timeout'));
    socket.on('error', () => done('error'));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      if (reply.includes('\r\n')) done(reply.trim());
    });
  });
}

async function terminate(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

function run(binary: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', (error) => resolve({ code: null, output: error.message }));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

export type TcpProxy = {
  port: number;
  url: string;
  /** Connections cut so far because cutWhen() matched what a client sent. */
  readonly cuts: number;
  close(): Promise<void>;
};

/**
 * A TCP relay to a real Redis that cuts a client's connection (both ways, dropping the bytes) the
 * moment it sends a chunk that cutWhen() matches: a connection lost between two commands, at a
 * chosen command, which no timing could hit reliably.
 */
export async function startTcpProxy(targetPort: number, cutWhen: (chunk: Buffer) => boolean): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let cuts = 0;
  const server = createServer((client) => {
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    }
    client.on('data', (chunk: Buffer) => {
      if (cutWhen(chunk)) {
        cuts++;
        client.destroy();
        upstream.destroy();
        return;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    get cuts() {
      return cuts;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
