/**
 * The bench's own redis-server: on a free port (never 6379), loopback only, no persistence,
 * stopped by pid at the end. INFO commandstats tells how many reads the gateways made.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort, startProcess, stopProcess, waitFor, type Started } from './proc.js';

/** `dir`: its temporary working directory, removed by stop() (or by whoever stops it otherwise). */
export type BenchRedis = { port: number; pid: number; url: string; dir: string; client: Redis; stop(): Promise<void>; commandCalls(): Promise<Record<string, number>> };

/** The redis-server binary, or undefined when none is installed. */
export function findRedisServer(): string | undefined {
  for (const candidate of ['redis-server', '/usr/bin/redis-server', '/usr/local/bin/redis-server']) {
    const probe = spawnSync(candidate, ['--version'], { encoding: 'utf8' });
    if (probe.error === undefined && probe.status === 0) return candidate;
  }
  return undefined;
}

export async function startBenchRedis(binary: string, core: number | undefined): Promise<BenchRedis> {
  let port = await freePort();
  while (port === 6379) port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'authgate-bench-redis-'));
  const proc: Started = startProcess('redis-server', binary, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--maxmemory-policy', 'noeviction'], {
    ...(core === undefined ? {} : { core }),
    stdout: 'pipe',
  });
  const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => 200 });
  client.on('error', () => {});
  await waitFor(`redis-server on ${port}`, 10_000, async () => {
    if (client.status !== 'ready') await client.connect().catch(() => {});
    return (await client.ping()) === 'PONG';
  }, proc);
  return {
    port,
    pid: proc.pid,
    url: `redis://127.0.0.1:${port}`,
    dir,
    client,
    async commandCalls() {
      const info = await client.info('commandstats');
      const calls: Record<string, number> = {};
      for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls[match[1]!] = Number(match[2]);
      return calls;
    },
    async stop() {
      client.disconnect();
      await stopProcess(proc);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
