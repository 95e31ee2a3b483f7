/**
 * A real nginx (Debian's nginx-light: built with auth_request) started by a test on loopback: its
 * own temporary prefix (config, pid, logs, temp paths), no root, a free port, one process
 * (`master_process off`), stopped by its pid. The `http { }` content is the caller's: the shipped
 * snippet from deploy/edge/, rendered with ports (edge-snippets.ts).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from './redis.js';

/** The nginx binary when one with auth_request is installed; undefined otherwise (tests then skip). */
export function findNginx(): string | undefined {
  for (const candidate of ['/usr/sbin/nginx', 'nginx']) {
    // `nginx -V` prints its configure arguments to stderr; auth_request is an optional module.
    const probe = spawnSync(candidate, ['-V'], { encoding: 'utf8' });
    if (probe.error === undefined && probe.status === 0 && probe.stderr.includes('--with-http_auth_request_module')) return candidate;
  }
  return undefined;
}

export type NginxProcess = {
  url: string;
  port: number;
  dir: string;
  /** The error log so far (a failing test prints it). */
  errorLog(): string;
  close(): Promise<void>;
};

/** The file around the snippet: what a packaged nginx.conf would hold, pointed at the prefix. */
function mainConfig(dir: string, httpContent: string): string {
  const temp = (name: string) => join(dir, 'temp', name);
  return `daemon off;
master_process off;
worker_processes 1;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events {
  worker_connections 1024;
}
http {
  access_log ${join(dir, 'access.log')};
  client_body_temp_path ${temp('client_body')};
  proxy_temp_path ${temp('proxy')};
  fastcgi_temp_path ${temp('fastcgi')};
  uwsgi_temp_path ${temp('uwsgi')};
  scgi_temp_path ${temp('scgi')};
${httpContent}
}
`;
}

/** Whether something accepts TCP connections on the port. */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(killer);
      resolve();
    });
    // nginx: SIGQUIT is the graceful stop; SIGTERM the fast one, enough for a test.
    child.kill('SIGTERM');
  });
}

/** Checks `httpContent` with `nginx -t` (the error text, or undefined when it passes). */
export function checkNginxConfig(binary: string, httpContent: string): string | undefined {
  const dir = prepareDir();
  try {
    const conf = join(dir, 'nginx.conf');
    writeFileSync(conf, mainConfig(dir, httpContent));
    const res = spawnSync(binary, ['-t', '-p', dir, '-e', join(dir, 'error.log'), '-c', conf], { encoding: 'utf8' });
    return res.status === 0 ? undefined : res.stderr;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function prepareDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'authgate-nginx-'));
  for (const name of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, 'temp', name), { recursive: true });
  return dir;
}

/** Starts nginx with `httpContent` listening on `port` (which the content names); waits until it accepts. */
export async function startNginx(binary: string, port: number, httpContent: string): Promise<NginxProcess> {
  const dir = prepareDir();
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, mainConfig(dir, httpContent));
  // -e: the error log before the config is read, else nginx tries /var/log/nginx/error.log.
  const child = spawn(binary, ['-p', dir, '-e', join(dir, 'error.log'), '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-8192)));
  const errorLog = () => {
    try {
      return readFileSync(join(dir, 'error.log'), 'utf8');
    } catch {
      return stderr;
    }
  };
  try {
    await waitFor('nginx to accept connections', 10_000, async () => child.exitCode !== null || (await accepts(port)));
    if (child.exitCode !== null) throw new Error(`nginx exited ${child.exitCode}: ${stderr}${errorLog()}`);
  } catch (error) {
    await stop(child);
    throw error;
  }
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    dir,
    errorLog,
    close: async () => {
      await stop(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
