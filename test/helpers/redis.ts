/**
 * Real Redis processes for tests: a server, a Sentinel topology or a Cluster, each on free ports
 * of 127.0.0.1 with its own temporary directory, all killed and removed in teardown.
 * redis-server, redis-cli must be on PATH (CI installs them); nothing here is skipped without.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createConnection, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { Redis } from 'ioredis';

/**
 * TLS-only Redis: the plain port is 0, so nothing can reach it without TLS. Clients are not asked
 * for certificates (tls-auth-clients no); nodes verify each other against the CA.
 */
export type RedisTls = {
  caFile: string;
  certFile: string;
  keyFile: string;
  /** The name in the servers' certificate, which the harness's own clients check. */
  serverName: string;
};

/** How the harness reaches one server: its port, and TLS and a password when it has them. */
export type RedisTarget = { port: number; tls?: RedisTls; password?: string };

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
  /** What the server printed since it (re)started, e.g. its refused TLS handshakes. */
  output(): string;
  /** Port, TLS and password, for redisCommandOn. */
  target: RedisTarget;
};

export type RedisOptions = {
  appendonly?: boolean;
  port?: number;
  dir?: string;
  /** More redis-server arguments, e.g. ['--maxmemory-policy', 'allkeys-lru']. */
  args?: string[];
  /** TLS only: the port is the TLS port and plain connections are impossible. */
  tls?: RedisTls;
  /** requirepass, and masterauth for when it replicates. */
  password?: string;
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
/**
 * Ports this process handed out lately: the kernel may give the port just closed to the next
 * probe, so two calls in a row (a gateway's public and ops ports) could otherwise get the same one.
 */
const handedOut = new Set<number>();

export async function freePort(): Promise<number> {
  for (;;) {
    const port = await probePort();
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    if (handedOut.size > 1024) handedOut.delete(handedOut.values().next().value!);
    return port;
  }
}

function probePort(): Promise<number> {
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
  const { tls, password } = options;
  const target: RedisTarget = { port, ...(tls ? { tls } : {}), ...(password !== undefined ? { password } : {}) };
  const args = [
    ...(tls ? ['--port', '0', '--tls-port', String(port), ...tlsArgs(tls)] : ['--port', String(port)]),
    ...(password !== undefined ? ['--requirepass', password, '--masterauth', password] : []),
    '--bind', '127.0.0.1',
    '--save', '',
    '--appendonly', options.appendonly === true ? 'yes' : 'no',
    '--dir', dir,
    ...(options.args ?? []),
  ];
  let launched: Launched | undefined = await launch('redis-server', args, target);
  let child: ChildProcess | undefined = launched.child;

  async function halt(signal: NodeJS.Signals): Promise<void> {
    const current = child;
    child = undefined;
    if (current === undefined) return;
    current.kill('SIGCONT'); // a paused server would not act on SIGTERM
    await terminate(current, signal);
  }

  return {
    port,
    url: tls ? `rediss://${tls.serverName}:${port}` : `redis://127.0.0.1:${port}`,
    dir,
    target,
    output: () => launched?.output() ?? '',
    async stop() {
      await halt('SIGTERM');
      if (ownDir) await rm(dir, { recursive: true, force: true });
    },
    kill: () => halt('SIGKILL'),
    async restart() {
      await halt('SIGTERM');
      launched = await launch('redis-server', args, target);
      child = launched.child;
    },
    pause: () => void child?.kill('SIGSTOP'),
    resume: () => void child?.kill('SIGCONT'),
  };
}

export type SentinelTopology = {
  name: string;
  sentinels: { host: string; port: number }[];
  /** How the harness reaches each Sentinel (TLS, the Sentinels' password). */
  sentinelTargets: RedisTarget[];
  master: RedisServer;
  replica: RedisServer;
  /** Everything the master, the replica and the Sentinels printed. */
  output(): string;
  stop(): Promise<void>;
};

export type SentinelOptions = {
  /** TLS only, everywhere: clients, replication, Sentinel to Sentinel and to the data nodes. */
  tls?: RedisTls;
  /** requirepass of master and replica (the Sentinels get it as auth-pass). */
  password?: string;
  /** requirepass of the Sentinels themselves. */
  sentinelPassword?: string;
};

/** A master, one replica and three Sentinels (quorum 2) that already know each other. */
export async function startSentinelTopology(options: SentinelOptions = {}): Promise<SentinelTopology> {
  requireRedis();
  const name = 'authgate-test';
  const { tls, password, sentinelPassword } = options;
  const data = { ...(tls ? { tls } : {}), ...(password !== undefined ? { password } : {}) };
  const master = await startRedis(data);
  const replica = await startRedis({ ...data, args: ['--replicaof', '127.0.0.1', String(master.port)] });
  const dir = await mkdtemp(join(tmpdir(), 'authgate-sentinel-'));
  const sentinels: { host: string; port: number; launched: Launched; target: RedisTarget }[] = [];
  const stop = async () => {
    await Promise.all(sentinels.map((s) => terminate(s.launched.child, 'SIGKILL')));
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
          // With TLS the Sentinel announces its TLS port in its hellos (tls-replication yes).
          ...(tls
            ? ['port 0', `tls-port ${port}`, ...pairsToLines(tlsArgs(tls))]
            : [`port ${port}`]),
          'bind 127.0.0.1',
          `dir ${dir}`,
          // Without sentinel-pass, a Sentinel uses its own requirepass towards the other Sentinels.
          ...(sentinelPassword !== undefined ? [`requirepass ${sentinelPassword}`] : []),
          `sentinel monitor ${name} 127.0.0.1 ${master.port} 2`,
          ...(password !== undefined ? [`sentinel auth-pass ${name} ${password}`] : []),
          `sentinel down-after-milliseconds ${name} 1000`,
          `sentinel failover-timeout ${name} 4000`,
          `sentinel parallel-syncs ${name} 1`,
          '',
        ].join('\n'),
      );
      const target: RedisTarget = { port, ...(tls ? { tls } : {}), ...(sentinelPassword !== undefined ? { password: sentinelPassword } : {}) };
      sentinels.push({ host: '127.0.0.1', port, target, launched: await launch('redis-server', [conf, '--sentinel'], target) });
    }
    // Failover needs Sentinels that see each other and the replica; hellos take a few seconds.
    await waitFor('sentinels to discover each other and the replica', 20_000, async () => {
      for (const sentinel of sentinels) {
        const state = pairs(await redisCommandOn(sentinel.target, 'SENTINEL', 'MASTER', name));
        if (Number(state['num-other-sentinels']) < 2 || Number(state['num-slaves']) < 1) return false;
      }
      return String(await redisCommandOn(replica.target, 'INFO', 'replication')).includes('master_link_status:up');
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    name,
    sentinels: sentinels.map(({ host, port }) => ({ host, port })),
    sentinelTargets: sentinels.map((s) => s.target),
    master,
    replica,
    output: () => [master.output(), replica.output(), ...sentinels.map((s) => s.launched.output())].join('\n'),
    stop,
  };
}

export type RedisCluster = {
  /** Every server, masters and replicas: the seed list for a cluster client. */
  nodes: { host: string; port: number }[];
  servers: RedisServer[];
  /**
   * Each server's role as the server itself reports it (its `myself` line of CLUSTER NODES) at
   * the time of the call, so after a failover too; a server that does not answer (killed,
   * paused) is left out.
   */
  roles(): Promise<ClusterRole[]>;
  /** The ports of the servers that say they replicate masterPort, now (see roles()). */
  replicasOf(masterPort: number): Promise<number[]>;
  /** Everything the nodes printed. */
  output(): string;
  stop(): Promise<void>;
};

/** A cluster node's role; masterPort is the master a replica replicates. */
export type ClusterRole = { port: number; role: 'master' | 'replica'; masterPort?: number };

export type ClusterOptions = {
  /** TLS only, the cluster bus included (tls-cluster yes). */
  tls?: RedisTls;
  /** requirepass (and masterauth) of every node. */
  password?: string;
  /** Replicas per master (redis-cli --cluster-replicas); 0 by default. */
  replicas?: number;
};

/**
 * Three masters, each with `replicas` replicas (none by default), every slot assigned; resolves
 * once every node says cluster_state:ok, knows every other node with its final role, and every
 * replica is attached and in sync with its master.
 */
export async function startCluster(options: ClusterOptions = {}): Promise<RedisCluster> {
  requireRedis();
  const { tls, password } = options;
  const replicas = options.replicas ?? 0;
  if (!Number.isInteger(replicas) || replicas < 0) throw new Error(`replicas must be a whole number, not ${replicas}`);
  const masters = 3;
  const servers: RedisServer[] = [];
  const stop = async () => {
    await Promise.all(servers.map((server) => server.stop()));
  };
  try {
    for (let i = 0; i < masters * (1 + replicas); i++) {
      // The cluster bus gets its own free port rather than port + 10000, which may be taken.
      const busPort = await freePort();
      servers.push(
        await startRedis({
          ...(tls ? { tls } : {}),
          ...(password !== undefined ? { password } : {}),
          args: [
            '--cluster-enabled', 'yes',
            '--cluster-config-file', 'nodes.conf',
            '--cluster-node-timeout', '2000',
            '--cluster-port', String(busPort),
            ...(tls ? ['--tls-cluster', 'yes'] : []),
            // Redis 7 waits 5 s for more replicas before a diskless full sync: start it at once.
            ...(replicas > 0 ? ['--repl-diskless-sync-delay', '0'] : []),
          ],
        }),
      );
    }
    const create = await run('redis-cli', [
      ...(tls ? ['--tls', '--cacert', tls.caFile, '--sni', tls.serverName] : []),
      ...(password !== undefined ? ['-a', password, '--no-auth-warning'] : []),
      '--cluster', 'create',
      ...servers.map((server) => `127.0.0.1:${server.port}`),
      '--cluster-replicas', String(replicas),
      '--cluster-yes',
    ]);
    if (create.code !== 0) throw new Error(`redis-cli --cluster create failed:\n${create.output}`);
    await waitFor('cluster_state:ok on every node', 20_000, async () => {
      for (const server of servers) {
        const info = String(await redisCommandOn(server.target, 'CLUSTER', 'INFO'));
        if (!info.includes('cluster_state:ok') || !new RegExp(`^cluster_known_nodes:${servers.length}\\r?$`, 'm').test(info)) return false;
      }
      return true;
    });
    if (replicas > 0) {
      // A replica can take over only once it is in sync and every master knows it as the replica
      // of its master (the masters vote on its election): the gossip takes a moment to agree.
      await waitFor('every replica in sync and known as such by every node', 30_000, async () => {
        for (const server of servers) {
          const nodes = clusterNodes(String(await redisCommandOn(server.target, 'CLUSTER', 'NODES')));
          if (nodes.some((node) => !node.healthy)) return false;
          if (nodes.filter((node) => node.role === 'master').length !== masters) return false;
          if (nodes.filter((node) => node.role === 'replica' && node.masterId !== undefined).length !== masters * replicas) return false;
          const info = String(await redisCommandOn(server.target, 'INFO', 'replication'));
          const myself = nodes.find((node) => node.myself);
          if (myself?.role === 'master') {
            const online = info.match(/^slave\d+:.*state=online/gm) ?? [];
            if (!info.includes(`connected_slaves:${replicas}`) || online.length !== replicas) return false;
          } else if (!info.includes('master_link_status:up') || info.includes('master_sync_in_progress:1')) {
            return false;
          }
        }
        return true;
      });
    }
  } catch (error) {
    await stop();
    throw error;
  }
  const roles = async (): Promise<ClusterRole[]> => {
    const found = await Promise.all(servers.map(async (server): Promise<ClusterRole | undefined> => {
      const reply = await redisCommandOn(server.target, 'CLUSTER', 'NODES').catch(() => undefined);
      if (reply === undefined) return undefined;
      const nodes = clusterNodes(String(reply));
      const myself = nodes.find((node) => node.myself);
      if (myself === undefined) return undefined;
      if (myself.role === 'master') return { port: server.port, role: 'master' };
      const masterPort = nodes.find((node) => node.id === myself.masterId)?.port;
      return { port: server.port, role: 'replica', ...(masterPort !== undefined ? { masterPort } : {}) };
    }));
    return found.filter((role) => role !== undefined);
  };
  return {
    nodes: servers.map((server) => ({ host: '127.0.0.1', port: server.port })),
    servers,
    roles,
    replicasOf: async (masterPort) =>
      (await roles()).filter((role) => role.role === 'replica' && role.masterPort === masterPort).map((role) => role.port),
    output: () => servers.map((server) => server.output()).join('\n'),
    stop,
  };
}

type ClusterNode = { id: string; port: number; myself: boolean; role: 'master' | 'replica'; masterId?: string; healthy: boolean };

/**
 * CLUSTER NODES, one line a node:
 * `<id> <ip:port@cport[,hostname]> <flags> <master id or -> <ping> <pong> <epoch> <link> <slots…>`.
 */
function clusterNodes(reply: string): ClusterNode[] {
  return reply
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line): ClusterNode => {
      const [id = '', address = '', flagList = '', master = '-', , , , link = ''] = line.trim().split(' ');
      const flags = flagList.split(',');
      return {
        id,
        port: Number(/:(\d+)@/.exec(address)?.[1]),
        myself: flags.includes('myself'),
        role: flags.includes('slave') ? 'replica' : 'master',
        ...(master !== '-' ? { masterId: master } : {}),
        healthy: link === 'connected' && !flags.some((flag) => ['fail', 'fail?', 'handshake', 'noaddr'].includes(flag)),
      };
    });
}

/** One command on a fresh connection, for tests to look at or poke a server directly. */
export async function redisCommand(port: number, command: string, ...args: (string | number)[]): Promise<unknown> {
  return redisCommandOn({ port }, command, ...args);
}

/** redisCommand for a server that speaks TLS only or asks for a password. */
export async function redisCommandOn(target: RedisTarget, command: string, ...args: (string | number)[]): Promise<unknown> {
  const client = new Redis({
    host: '127.0.0.1',
    port: target.port,
    ...(target.password !== undefined ? { password: target.password } : {}),
    ...(target.tls ? { tls: harnessTls(target.tls) } : {}),
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

type Launched = { child: ChildProcess; output: () => string };

/** Spawns a server and resolves once it answers PING (and is done loading its data). */
async function launch(binary: string, args: string[], target: RedisTarget): Promise<Launched> {
  const { port } = target;
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-200_000);
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
      return (await rawPing(target)) === '+PONG';
    });
  } catch (error) {
    await terminate(child, 'SIGKILL');
    throw new Error(`${binary} ${args.join(' ')} did not start: ${String(error)}\n${output.slice(-4000)}`);
  }
  return { child, output: () => output };
}

/**
 * PING without a client library, so a server still loading (-LOADING) counts as not ready; over
 * TLS and after AUTH when the server needs them. Resolves with the PING's reply line.
 */
function rawPing(target: RedisTarget): Promise<string> {
  return new Promise((resolve) => {
    const address = { host: '127.0.0.1', port: target.port };
    const socket: Socket = target.tls ? tlsConnect({ ...address, ...harnessTls(target.tls) }) : createConnection(address);
    const request = (target.password !== undefined ? `AUTH ${target.password}\r\n` : '') + 'PING\r\n';
    const lines = target.password !== undefined ? 2 : 1;
    let reply = '';
    const done = (value: string) => {
      socket.destroy();
      resolve(value);
    };
    socket.setTimeout(1000, () => done('timeout'));
    socket.on('error', () => done('error'));
    socket.on(target.tls ? 'secureConnect' : 'connect', () => socket.write(request));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      const got = reply.split('\r\n');
      if (got.length > lines) done(got[lines - 1]!.trim());
    });
  });
}

/** The harness's own TLS: the test CA, and the name in the servers' certificate. */
function harnessTls(tls: RedisTls) {
  return { ca: readFileSync(tls.caFile), servername: tls.serverName, rejectUnauthorized: true };
}

/** redis-server arguments of a TLS-only node; also used (as config lines) for Sentinels. */
function tlsArgs(tls: RedisTls): string[] {
  return [
    '--tls-cert-file', tls.certFile,
    '--tls-key-file', tls.keyFile,
    '--tls-ca-cert-file', tls.caFile,
    '--tls-auth-clients', 'no',
    '--tls-replication', 'yes',
  ];
}

/** ['--a', 'x', '--b', 'y'] to ['a x', 'b y'], for a config file. */
function pairsToLines(args: string[]): string[] {
  const lines: string[] = [];
  for (let i = 0; i + 1 < args.length; i += 2) lines.push(`${args[i]!.replace(/^--/, '')} ${args[i + 1]}`);
  return lines;
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
