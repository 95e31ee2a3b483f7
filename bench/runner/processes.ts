/**
 * The processes of a run: where the bench's files are, which core serves and which generates,
 * the run's private temporary directory (the identity key, routes files, Redis's), authgate
 * gateways and the node:http children, and the load generator over IPC.
 */
import { generateKeyPairSync, type JsonWebKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { send } from '../lib/http.js';
import { firstMessage, freePort, hasTaskset, startProcess, waitFor, type Started } from '../lib/proc.js';
import type { RunResult, RunSpec } from '../loadgen.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const GATEWAY_MAIN = `${ROOT}dist/main.js`;
/** A compiled file of the bench (dist-bench/bench/FILE). */
export const benchFile = (file: string) => fileURLToPath(new URL(`../${file}`, import.meta.url));
export const SERVER_CORE = 0;
export const GENERATOR_CORE = 1;
/** The User-Agent of every request the bench sends through a proxy. */
export const UA = 'authgate-bench/1.0';

export type Machine = { nproc: number; cpuModel: string; node: string; memGiB: number; taskset: boolean; redis: string };

export function machine(redisBinary: string): Machine {
  let cpuModel = 'unknown';
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8').split('\n').find((l) => l.startsWith('model name'));
    if (line !== undefined) cpuModel = line.slice(line.indexOf(':') + 1).trim();
  } catch {
    // not Linux
  }
  return { nproc: availableParallelism(), cpuModel, node: process.version, memGiB: Math.round(totalmem() / 2 ** 30), taskset: hasTaskset, redis: redisBinary };
}

/** Temporary directories of this run (the run's own, Redis's, nginx's), removed once every process stopped. */
const temporary: string[] = [];
export const keepTemporary = (dir: string) => void temporary.push(dir);

export function removeTemporary(): void {
  for (const dir of temporary.splice(0)) rmSync(dir, { recursive: true, force: true });
}

let runDir: string | undefined;
/** Writes a file of this run (mode 0600) in its private temporary directory; returns its path. */
export function runFile(name: string, text: string): string {
  if (runDir === undefined) {
    runDir = mkdtempSync(join(tmpdir(), 'authgate-bench-'));
    keepTemporary(runDir);
  }
  const file = join(runDir, name);
  writeFileSync(file, text, { mode: 0o600 });
  return file;
}

/**
 * The identity assertion's signing key for every gateway of this run: P-256, PKCS#8 PEM in a
 * file of the private temporary directory (production refuses to start without one while the
 * assertion is on). Its public JWK is what the main gateway's JWKS must show.
 */
export function makeIdentityKey(): { file: string; publicJwk: JsonWebKey } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const file = runFile('identity-key.pem', privateKey.export({ format: 'pem', type: 'pkcs8' }) as string);
  return { file, publicJwk: publicKey.export({ format: 'jwk' }) };
}

export async function startNodeChild(name: string, script: string, args: string[], core: number, env?: NodeJS.ProcessEnv): Promise<{ proc: Started; port: number }> {
  const proc = startProcess(name, process.execPath, [script, ...args], { core, ipc: true, ...(env === undefined ? {} : { env }) });
  const { port } = await firstMessage<{ port: number }>(proc);
  return { proc, port };
}

export type Gateway = { name: string; proc: Started; publicUrl: string; opsUrl: string };

export async function startGateway(name: string, main: string, env: Record<string, string>, nodeFlags: string[] = []): Promise<Gateway> {
  const port = await freePort();
  const opsPort = await freePort();
  const proc = startProcess(name, process.execPath, [...nodeFlags, main], {
    core: SERVER_CORE,
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      NODE_ENV: 'production',
      AUTHGATE_HOST: '127.0.0.1',
      AUTHGATE_OPS_HOST: '127.0.0.1',
      AUTHGATE_PORT: String(port),
      AUTHGATE_OPS_PORT: String(opsPort),
      AUTHGATE_TLS: 'offloaded',
      AUTHGATE_SHUTDOWN_DELAY_SECONDS: '0',
      AUTHGATE_SHUTDOWN_GRACE_SECONDS: '5',
      ...env,
    },
  });
  const gateway = { name, proc, publicUrl: `http://127.0.0.1:${port}`, opsUrl: `http://127.0.0.1:${opsPort}` };
  // Several gateways start side by side; on a 2-core machine busy with other work that took over 20 s.
  await waitFor(`${name} ready`, 60_000, async () => (await send(`${gateway.opsUrl}/readyz`)).status === 200, proc);
  return gateway;
}

/** The generator child: runs specs over IPC, several at once when asked. */
export class LoadGenerator {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve(results: RunResult[]): void; reject(error: Error): void }>();
  private readonly proc: Started;

  constructor(proc: Started) {
    this.proc = proc;
    proc.child.on('message', (message: { id?: number; results?: RunResult[]; error?: string }) => {
      if (message.id === undefined) return;
      const waiter = this.waiting.get(message.id);
      if (waiter === undefined) return;
      this.waiting.delete(message.id);
      if (message.error !== undefined) waiter.reject(new Error(`load generator: ${message.error}`));
      else waiter.resolve(message.results ?? []);
    });
    proc.child.on('exit', () => {
      for (const waiter of this.waiting.values()) waiter.reject(new Error(`load generator exited:\n${proc.output()}`));
      this.waiting.clear();
    });
  }
  static async start(): Promise<LoadGenerator> {
    const proc = startProcess('loadgen', process.execPath, [benchFile('loadgen.js')], { core: GENERATOR_CORE, ipc: true });
    await firstMessage(proc);
    return new LoadGenerator(proc);
  }
  run(...runs: RunSpec[]): Promise<RunResult[]> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.proc.child.send({ id, runs });
    });
  }
}
