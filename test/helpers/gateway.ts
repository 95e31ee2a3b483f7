import { request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import type { Test } from 'tap';
import type { Config } from '../../src/config/config.js';
import { loadConfig, type Env } from '../../src/config/load.js';
import { buildGateway, type Gateway, type GatewayDeps } from '../../src/gateway.js';
import { captureLogs } from './log-capture.js';
import { startRecordingUpstream, type RecordingUpstream } from './upstream.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
export const JWT_SECRET = 'test-jwt-secret-0123456789abcdef0123456789';
export const UA = { 'user-agent': 'authgate-tests/1.0' };

export function testConfig(env: Env = {}): Config {
  const loaded = loadConfig({
    AUTHGATE_PORT: '0',
    AUTHGATE_OPS_PORT: '0',
    AUTHGATE_HOST: '127.0.0.1',
    AUTHGATE_OPS_HOST: '127.0.0.1',
    AUTHGATE_JWT_SECRET: JWT_SECRET,
    AUTHGATE_ADMIN_TOKEN: ADMIN_TOKEN,
    LOG_LEVEL: 'info',
    // Load shedding reacts to this machine's load, not the gateway's; its own test turns it on.
    AUTHGATE_SHED_EVENT_LOOP_DELAY_MS: '0',
    // `AUTHGATE_AUTHZ_SPEED_TRICKS_OFF=all npx tap test/edge-authz/…` runs a file with the
    // authorization port's speed tricks off (test/edge-authz/speed-tricks-off.test.ts does for some).
    ...(process.env['AUTHGATE_AUTHZ_SPEED_TRICKS_OFF'] === undefined ? {} : { AUTHGATE_AUTHZ_SPEED_TRICKS_OFF: process.env['AUTHGATE_AUTHZ_SPEED_TRICKS_OFF'] }),
    ...env,
  });
  if (!loaded.ok) throw new Error(loaded.errors.join('; '));
  return loaded.config;
}

export type Response = { status: number; headers: IncomingHttpHeaders; body: string; json: () => any };

/** Real HTTP over loopback; no default headers at all, so tests say exactly what is sent. */
export function send(
  url: string,
  options: { method?: string; headers?: OutgoingHttpHeaders | string[]; body?: string | Buffer } = {},
): Promise<Response> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const req = httpRequest(
      { host: target.hostname, port: target.port, path: target.pathname + target.search, method: options.method ?? 'GET', headers: options.headers ?? {}, setHost: true },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: () => JSON.parse(body) });
        });
      },
    );
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

export type StartedGateway = {
  gateway: Gateway;
  upstream: RecordingUpstream;
  publicUrl: string;
  opsUrl: string;
  logs: ReturnType<typeof captureLogs>;
  /** Admin API: create an organization, returning its id. */
  createOrganization(input?: { name?: string; email?: string; password?: string }): Promise<{ id: string; email: string; password: string }>;
  login(email: string, password: string): Promise<string>;
  createApiKey(token: string): Promise<{ id: string; apiKey: string }>;
  get(path: string, headers?: OutgoingHttpHeaders): Promise<Response>;
};

let orgCounter = 0;

/**
 * A gateway on Redis answers every store call 503 until its connection is up (commands are never
 * queued), and since the admin token's refusal limit counts in the store, the first admin call
 * can meet that before its first argon2 hash would have hidden it. So a test waits for the
 * connection's first word: up, or (for tests of a Redis that is down on purpose) unreachable;
 * bounded, and then it goes on either way.
 */
export async function storeSettled(config: Config, logs: ReturnType<typeof captureLogs>): Promise<void> {
  if (config.store.kind !== 'redis') return;
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; ) {
    const text = logs.text();
    if (text.includes('"redis connection ready"') || text.includes('"redis_unreachable"')) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** An isolated gateway on free ports with its own recording upstream, closed at teardown. */
export async function startGateway(
  t: Test,
  // port: a test that must know the public port before start (a WebAuthn origin names it).
  // configure: a configuration the settings cannot make outside production (e.g. no WebAuthn relying party).
  options: { env?: Env; deps?: Partial<GatewayDeps>; upstream?: RecordingUpstream; port?: number; configure?: (config: Config) => Config } = {},
): Promise<StartedGateway> {
  const upstream = options.upstream ?? (await startRecordingUpstream());
  const logs = captureLogs();
  const given = testConfig({ AUTHGATE_UPSTREAM_URL: upstream.url, ...options.env });
  const config = options.configure === undefined ? given : options.configure(given);
  const gateway = await buildGateway(config, { logDestination: logs.destination, ...options.deps });
  await storeSettled(config, logs);
  await gateway.publicServer.listen({ host: '127.0.0.1', port: options.port ?? 0 });
  await gateway.opsServer.listen({ host: '127.0.0.1', port: 0 });
  t.teardown(async () => {
    await gateway.close();
    if (options.upstream === undefined) await upstream.close();
  });
  const portOf = (server: Gateway['publicServer']) => (server.server.address() as { port: number }).port;
  const publicUrl = `http://127.0.0.1:${portOf(gateway.publicServer)}`;
  const opsUrl = `http://127.0.0.1:${portOf(gateway.opsServer)}`;

  const started: StartedGateway = {
    gateway,
    upstream,
    publicUrl,
    opsUrl,
    logs,
    async createOrganization(input = {}) {
      const n = ++orgCounter;
      const body = {
        name: input.name ?? `Org ${n}`,
        email: input.email ?? `owner-${n}-${process.pid}@example.test`,
        password: input.password ?? `password-${n}-long-enough`,
      };
      const res = await send(`${opsUrl}/admin/organizations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status !== 201) throw new Error(`create organization: ${res.status} ${res.body}`);
      return { id: res.json().id as string, email: body.email, password: body.password };
    },
    async login(email, password) {
      const res = await send(`${publicUrl}/auth/login`, {
        method: 'POST',
        headers: { ...UA, 'content-type': 'application/json' },
        body: JSON.stringify({ email, password }),
      });
      if (res.status !== 200) throw new Error(`login: ${res.status} ${res.body}`);
      return res.json().token as string;
    },
    async createApiKey(token) {
      const res = await send(`${publicUrl}/auth/api-key`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${token}` } });
      if (res.status !== 201) throw new Error(`create key: ${res.status} ${res.body}`);
      return res.json() as { id: string; apiKey: string };
    },
    get(path, headers = {}) {
      return send(`${publicUrl}${path}`, { headers: { ...UA, ...headers } });
    },
  };
  return started;
}

/** Polls until `check` passes or the deadline; for effects that cross replicas. */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 5000, stepMs = 10): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, stepMs));
  }
}
