import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ADMIN_TOKEN, JWT_SECRET, send } from './gateway.js';
import { freePort } from './redis.js';

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

export type GatewayProcess = {
  child: ChildProcess;
  publicUrl: string;
  opsUrl: string;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
};

/** The built gateway as a real process (dist/main.js), for signals, exit codes and start checks. */
export async function startGatewayProcess(env: Record<string, string>, options: { waitReady?: boolean } = {}): Promise<GatewayProcess> {
  const port = await freePort();
  const opsPort = await freePort();
  let output = '';
  const child = spawn(process.execPath, [MAIN], {
    env: {
      PATH: process.env['PATH'] ?? '',
      AUTHGATE_HOST: '127.0.0.1',
      AUTHGATE_OPS_HOST: '127.0.0.1',
      AUTHGATE_PORT: String(port),
      AUTHGATE_OPS_PORT: String(opsPort),
      AUTHGATE_JWT_SECRET: JWT_SECRET,
      AUTHGATE_ADMIN_TOKEN: ADMIN_TOKEN,
      // Load shedding reacts to this machine's load (other tests in parallel), not the gateway's.
      AUTHGATE_SHED_EVENT_LOOP_DELAY_MS: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const started: GatewayProcess = { child, publicUrl: `http://127.0.0.1:${port}`, opsUrl: `http://127.0.0.1:${opsPort}`, output: () => output, exited };
  if (options.waitReady !== false) {
    // Generous: a start on a machine running other suites beside this one can take many seconds.
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`gateway exited: ${output}`);
      try {
        // Ready, and its start line out: log lines leave in batches up to 10 ms later (log-sink.ts).
        if ((await send(`${started.opsUrl}/readyz`)).status === 200 && output.includes('"event":"started"')) break;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) {
        // Never leave it running behind the failed test (it would hold its ports and its store).
        child.kill('SIGKILL');
        throw new Error(`gateway did not become ready: ${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return started;
}

/** Through the process's own admin API and public port: an organization and a login token. */
export async function createOrganizationAndLogin(
  gw: GatewayProcess,
  input: { name: string; email: string; adminToken?: string },
): Promise<{ orgId: string; orgStatus: number; loginStatus: number; token: string }> {
  const password = 'long-enough-password';
  const org = await send(`${gw.opsUrl}/admin/organizations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${input.adminToken ?? ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: input.name, email: input.email, password }),
  });
  const login = await send(`${gw.publicUrl}/auth/login`, {
    method: 'POST',
    headers: { 'user-agent': 'authgate-tests/1.0', 'content-type': 'application/json' },
    body: JSON.stringify({ email: input.email, password }),
  });
  return {
    orgId: org.status === 201 ? (org.json().id as string) : '',
    orgStatus: org.status,
    loginStatus: login.status,
    token: login.status === 200 ? (login.json().token as string) : '',
  };
}
