/**
 * A real Caddy (Debian's caddy 2.6) started by a test on loopback: its own temporary directory
 * for its data and config (XDG_DATA_HOME, XDG_CONFIG_HOME, HOME), no root, no admin endpoint, no
 * automatic HTTPS, a free port, stopped by its pid. The site block is the caller's: the shipped
 * deploy/edge/Caddyfile, rendered with ports (edge-snippets.ts).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { accepts } from './nginx-process.js';
import { waitFor } from './redis.js';

/** The caddy binary when one is installed; undefined otherwise (tests then skip). */
export function findCaddy(): string | undefined {
  for (const candidate of ['/usr/bin/caddy', 'caddy']) {
    const probe = spawnSync(candidate, ['version'], { encoding: 'utf8' });
    if (probe.error === undefined && probe.status === 0) return candidate;
  }
  return undefined;
}

export type CaddyProcess = { url: string; port: number; output(): string; close(): Promise<void> };

/** The global options a test needs: nothing listens but the site, nothing is written outside the directory. */
const GLOBAL_OPTIONS = `{
\tadmin off
\tauto_https off
}
`;

function environment(dir: string): NodeJS.ProcessEnv {
  return { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: dir, XDG_DATA_HOME: join(dir, 'data'), XDG_CONFIG_HOME: join(dir, 'config') };
}

function writeCaddyfile(dir: string, site: string): string {
  const file = join(dir, 'Caddyfile');
  writeFileSync(file, `${GLOBAL_OPTIONS}\n${site}`);
  return file;
}

/** `caddy adapt` of the site block: the JSON config, or throws with Caddy's words. */
export function adaptCaddyfile(binary: string, site: string): unknown {
  const dir = mkdtempSync(join(tmpdir(), 'authgate-caddy-'));
  try {
    const file = writeCaddyfile(dir, site);
    const res = spawnSync(binary, ['adapt', '--config', file, '--adapter', 'caddyfile'], { encoding: 'utf8', env: environment(dir) });
    if (res.status !== 0) throw new Error(`caddy adapt: ${res.stderr}`);
    return JSON.parse(res.stdout) as unknown;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(killer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Starts Caddy with `site` listening on `port` (which the site names); waits until it accepts. */
export async function startCaddy(binary: string, port: number, site: string): Promise<CaddyProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'authgate-caddy-'));
  const file = writeCaddyfile(dir, site);
  const child = spawn(binary, ['run', '--config', file, '--adapter', 'caddyfile'], { env: environment(dir), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-16384));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  try {
    await waitFor('caddy to accept connections', 15_000, async () => child.exitCode !== null || (await accepts(port)));
    if (child.exitCode !== null) throw new Error(`caddy exited ${child.exitCode}: ${output}`);
  } catch (error) {
    await stop(child);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    output: () => output,
    close: async () => {
      await stop(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
