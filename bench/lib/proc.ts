/**
 * Child processes of the benchmark: each started on purpose, pinned to a core where `taskset`
 * exists, remembered by pid, and stopped by pid at the end (SIGTERM, then SIGKILL).
 */
import { spawn, spawnSync, type ChildProcess, type StdioOptions } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

export const hasTaskset: boolean = (() => {
  const probe = spawnSync('taskset', ['-p', String(process.pid)], { encoding: 'utf8' });
  return probe.error === undefined && probe.status === 0;
})();

export type Started = { name: string; child: ChildProcess; pid: number; output(): string };

const started: Started[] = [];

// Last resort when the bench dies without its cleanup: nothing it started outlives it.
process.on('exit', () => {
  for (const s of started) {
    if (s.child.exitCode === null && s.child.signalCode === null) {
      try {
        process.kill(s.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
});

/** Spawns `command args` on `core` (taskset -c) when possible; keeps the last 8 KB of its stderr. */
export function startProcess(
  name: string,
  command: string,
  args: readonly string[],
  options: { core?: number; env?: NodeJS.ProcessEnv; ipc?: boolean; stdout?: 'ignore' | 'pipe' } = {},
): Started {
  const pinned = options.core !== undefined && hasTaskset;
  const file = pinned ? 'taskset' : command;
  const argv = pinned ? ['-c', String(options.core), command, ...args] : [...args];
  const stdio: StdioOptions = ['ignore', options.stdout ?? 'ignore', 'pipe'];
  if (options.ipc === true) stdio.push('ipc');
  // taskset execs the command in place, so the pid is the command's own.
  const child = spawn(file, argv, { env: options.env ?? process.env, stdio });
  if (child.pid === undefined) throw new Error(`${name}: could not start ${command}`);
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-8192);
  };
  child.stderr?.on('data', keep);
  if (options.stdout === 'pipe') child.stdout?.on('data', keep);
  const entry: Started = { name, child, pid: child.pid, output: () => output };
  started.push(entry);
  return entry;
}

/** Stops one process by its pid: SIGTERM, then SIGKILL after graceMs. */
export async function stopProcess(entry: Started, graceMs = 8000): Promise<void> {
  const { child, pid } = entry;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  const timer = setTimeout(() => {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }, graceMs);
  await exited;
  clearTimeout(timer);
}

/** Every process this bench started, newest first. */
export async function stopAll(): Promise<void> {
  for (const entry of [...started].reverse()) await stopProcess(entry);
}

/**
 * A loopback port nobody listens on now, and none this process handed out before: the kernel
 * may give the same ephemeral port twice in a row while the first taker has not bound it yet
 * (the tests' helper, test/helpers/redis.ts, keeps the same guard).
 */
const handedOut = new Set<number>();
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await probePort();
    if (handedOut.has(port)) continue;
    handedOut.add(port);
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

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls check() until it is true; throws naming what it waited for. */
export async function waitFor(what: string, timeoutMs: number, check: () => Promise<boolean> | boolean, entry?: Started): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (entry !== undefined && (entry.child.exitCode !== null || entry.child.signalCode !== null)) {
      throw new Error(`${entry.name} exited while waiting for ${what}:\n${entry.output()}`);
    }
    try {
      if (await check()) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${entry ? `:\n${entry.output()}` : ''}`);
    await sleep(50);
  }
}

/** Pins this process (all its threads) to a core, so the orchestrator never runs on the server's. */
export function pinSelf(core: number): boolean {
  if (!hasTaskset) return false;
  return spawnSync('taskset', ['-a', '-p', '-c', String(core), String(process.pid)]).status === 0;
}

/** The first message a child sends over IPC, e.g. its port. */
export function firstMessage<T>(entry: Started, timeoutMs = 15_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${entry.name} sent nothing in ${timeoutMs} ms:\n${entry.output()}`)), timeoutMs);
    entry.child.once('message', (message) => {
      clearTimeout(timer);
      resolve(message as T);
    });
    entry.child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${entry.name} exited (${signal ?? code}):\n${entry.output()}`));
    });
  });
}

const CLOCK_TICKS = (() => {
  const probe = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const ticks = Number(probe.stdout?.trim());
  return Number.isFinite(ticks) && ticks > 0 ? ticks : 100;
})();

/** CPU time (user + system, all threads) a process has used so far, in ms; NaN where /proc is missing. */
export function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

/** Resident set size of a process now (VmRSS of /proc/<pid>/status), in KiB; NaN where /proc is missing or it is gone. */
export function rssKiB(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? Number.NaN : Number(match[1]);
  } catch {
    return Number.NaN;
  }
}
