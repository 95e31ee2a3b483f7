import type { LightMyRequestResponse } from 'fastify';
import type { Test } from 'tap';
import type { Env } from '../../src/config/load.js';
import { buildGateway, type Gateway, type GatewayDeps } from '../../src/gateway.js';
import { ADMIN_TOKEN, storeSettled, testConfig, UA } from './gateway.js';
import { captureLogs } from './log-capture.js';

/**
 * A whole gateway (buildGateway, the memory store, the real pipeline) that never listens: tests
 * drive it with fastify's `inject()` (light-my-request), so no sockets and no ports. The upstream
 * is a URL nothing answers on unless a test passes a real one (test/helpers/upstream.ts).
 *
 * What inject cannot show: it resolves dot segments (`/a/%2e%2e/b` arrives as `/b`) and builds
 * well-formed requests only. Raw targets and malformed HTTP stay in the socket suites
 * (test/e2e/http-edges.test.ts, test/request/refusals.test.ts with test/helpers/raw-http.ts).
 */
export type InjectedGateway = {
  gateway: Gateway;
  logs: ReturnType<typeof captureLogs>;
  /** The public port's pipeline, with the User-Agent every test client sends unless it says otherwise. */
  pub(options: InjectOptions): Promise<LightMyRequestResponse>;
  /** The ops port's pipeline, with the admin token unless the test sets `authorization` itself. */
  ops(options: InjectOptions): Promise<LightMyRequestResponse>;
  createOrganization(input?: { name?: string; email?: string; password?: string }): Promise<{ id: string; email: string; password: string }>;
  login(email: string, password: string): Promise<string>;
  createApiKey(token: string): Promise<{ id: string; apiKey: string }>;
  /** An organization logged in: its login token and one API key. */
  signedUp(): Promise<{ orgId: string; email: string; password: string; token: string; apiKey: string; keyId: string }>;
};

export type InjectOptions = {
  method?: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';
  url: string;
  /** `undefined` leaves a header out, User-Agent included (inject would add its own). */
  headers?: Record<string, string | undefined>;
  payload?: string | Buffer | object;
  /** Sends the headers exactly as given: no User-Agent (not even inject's own) and no admin token. */
  bare?: boolean;
};

/** Nothing listens here: a forwarded request that reaches it fails to connect (502). */
export const UNREACHABLE_UPSTREAM = 'http://127.0.0.1:9';

let orgCounter = 0;

export async function injectGateway(t: Test, options: { env?: Env; deps?: Partial<GatewayDeps> } = {}): Promise<InjectedGateway> {
  const logs = captureLogs();
  const config = testConfig({ AUTHGATE_UPSTREAM_URL: UNREACHABLE_UPSTREAM, ...options.env });
  const gateway = await buildGateway(config, { logDestination: logs.destination, ...options.deps });
  await storeSettled(config, logs);
  await Promise.all([gateway.publicServer.ready(), gateway.opsServer.ready()]);
  t.teardown(() => gateway.close());

  const pub: InjectedGateway['pub'] = ({ bare, headers, method, url, payload }) =>
    gateway.publicServer.inject({ method: method ?? 'GET', url, headers: bare === true ? { 'user-agent': undefined, ...headers } : { ...UA, ...headers }, ...(payload !== undefined && { payload }) });
  const ops: InjectedGateway['ops'] = ({ bare, headers, method, url, payload }) =>
    gateway.opsServer.inject({
      method: method ?? 'GET',
      url,
      headers: bare === true ? { 'user-agent': undefined, ...headers } : { authorization: `Bearer ${ADMIN_TOKEN}`, ...headers },
      ...(payload !== undefined && { payload }),
    });

  const injected: InjectedGateway = {
    gateway,
    logs,
    pub,
    ops,
    async createOrganization(input = {}) {
      const n = ++orgCounter;
      const body = {
        name: input.name ?? `Org ${n}`,
        email: input.email ?? `inject-${n}-${process.pid}@example.test`,
        password: input.password ?? `password-${n}-long-enough`,
      };
      const res = await ops({ method: 'POST', url: '/admin/organizations', payload: body });
      if (res.statusCode !== 201) throw new Error(`create organization: ${res.statusCode} ${res.body}`);
      return { id: res.json<{ id: string }>().id, email: body.email, password: body.password };
    },
    async login(email, password) {
      const res = await pub({ method: 'POST', url: '/auth/login', payload: { email, password } });
      if (res.statusCode !== 200) throw new Error(`login: ${res.statusCode} ${res.body}`);
      return res.json<{ token: string }>().token;
    },
    async createApiKey(token) {
      const res = await pub({ method: 'POST', url: '/auth/api-key', headers: { authorization: `Bearer ${token}` } });
      if (res.statusCode !== 201) throw new Error(`create key: ${res.statusCode} ${res.body}`);
      return res.json<{ id: string; apiKey: string }>();
    },
    async signedUp() {
      const org = await injected.createOrganization();
      const token = await injected.login(org.email, org.password);
      const key = await injected.createApiKey(token);
      return { orgId: org.id, email: org.email, password: org.password, token, apiKey: key.apiKey, keyId: key.id };
    },
  };
  return injected;
}

type ProblemAnswer = Pick<LightMyRequestResponse, 'statusCode' | 'headers' | 'body'>;

/** A problem answer: status, code, the problem media type, an x-request-id; returns the body. */
export function assertProblem(t: Test, res: ProblemAnswer, status: number, code: number, what = `${status}/${code}`): { code?: number; status?: number; type?: string; title?: string; detail?: string } {
  t.equal(res.statusCode, status, `${what}: status ${status}`);
  t.match(String(res.headers['content-type'] ?? ''), /^application\/problem\+json/, `${what}: application/problem+json`);
  t.ok(res.headers['x-request-id'], `${what}: an x-request-id`);
  let body: { code?: number; status?: number; type?: string; title?: string; detail?: string } = {};
  try {
    body = JSON.parse(res.body) as typeof body;
  } catch {
    t.fail(`${what}: the body is JSON (${res.body.slice(0, 80)})`);
  }
  t.equal(body.code, code, `${what}: code ${code}`);
  t.equal(body.status, status, `${what}: the body's status`);
  return body;
}

/**
 * Polls GET /auth/api-key with `credential` on gw until it answers `status` (bounded: 10 s), and
 * returns the last answer: for a revocation that crosses Redis pub/sub to another replica.
 */
export async function untilStatus(gw: InjectedGateway, credential: string, status: number): Promise<LightMyRequestResponse> {
  const ask = () => gw.pub({ url: '/auth/api-key', headers: { authorization: `Bearer ${credential}` } });
  let res = await ask();
  for (let i = 0; i < 400 && res.statusCode !== status; i++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    res = await ask();
  }
  return res;
}
