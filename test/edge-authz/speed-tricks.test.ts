import t, { type Test } from 'tap';
import net from 'node:net';
import { createDecisionAnswers } from '../../src/edge-authz/answers.js';
import type { EdgeAllow, EdgeDecision, EdgeRequest } from '../../src/edge-authz/decision.js';
import { ALL_SPEED_TRICKS, speedTricksWithout } from '../../src/edge-authz/speed-tricks.js';
import type { RoutesFile } from '../../src/route-table/types.js';
import { startAuthzGateway } from '../helpers/authz.js';
import { send, testConfig, UA } from '../helpers/gateway.js';
import { loadConfig } from '../../src/config/load.js';

/**
 * The authorization port's speed tricks (edge-authz/speed-tricks.ts) change what a request costs,
 * never what it is answered: the same requests, sent the same way to a port with every trick on
 * and to ports with one or all of them off (AUTHGATE_AUTHZ_SPEED_TRICKS_OFF), get the same bytes
 * back, but the values that are each gateway's own (Date, the organization id, the assertion's
 * signature and times). Each switch is also seen to switch (a test that passed with a switch
 * wired to nothing would prove nothing).
 */

const FILE: RoutesFile = {
  version: 1,
  scopes: { 'accounts:read': 'Read accounts', 'accounts:write': 'Change accounts' },
  routes: [
    { id: 'accounts', path: '/accounts', match: 'subtree', methods: { GET: 'accounts:read', POST: 'accounts:write' } },
    { id: 'health', path: '/healthz', match: 'exact', credentials: 'none', methods: { GET: 'public' } },
    { id: 'limited', path: '/limited', match: 'exact', methods: { GET: 'accounts:read' }, rateLimit: '50/1h' },
  ],
};

type Credentials = { key: string; token: string; readOnly: string };

/** The requests, as each proxy sends them (kept-allow.test.ts and http-endpoints.test.ts have their sources). */
const requests = (c: Credentials): Record<string, string> => ({
  'nginx allow (API key)': `GET /authz/auth-request HTTP/1.1\r\nHost: authz\r\nX-Original-Method: GET\r\nX-Original-URI: /accounts/7?q=1\r\nX-Forwarded-For: 203.0.113.9\r\nUser-Agent: ${UA['user-agent']}\r\nAuthorization: Bearer ${c.key}\r\n\r\n`,
  'nginx allow (login token)': `GET /authz/auth-request HTTP/1.1\r\nHost: authz\r\nX-Original-Method: GET\r\nX-Original-URI: /accounts\r\nAuthorization: Bearer ${c.token}\r\n\r\n`,
  'nginx public route': `GET /authz/auth-request HTTP/1.1\r\nHost: authz\r\nX-Original-Method: GET\r\nX-Original-URI: /healthz\r\n\r\n`,
  'nginx limited route': `GET /authz/auth-request HTTP/1.1\r\nHost: authz\r\nX-Original-Method: GET\r\nX-Original-URI: /limited\r\nAuthorization: Bearer ${c.key}\r\n\r\n`,
  'nginx no credential': `GET /authz/auth-request HTTP/1.1\r\nHost: authz\r\nX-Original-Method: GET\r\nX-Original-URI: /accounts\r\n\r\n`,
  'nginx insufficient scope': `GET /authz/auth-request HTTP/1.1\r\nHost: authz\r\nX-Original-Method: POST\r\nX-Original-URI: /accounts\r\nAuthorization: Bearer ${c.readOnly}\r\n\r\n`,
  'nginx no route': `GET /authz/auth-request HTTP/1.1\r\nHost: authz\r\nX-Original-Method: GET\r\nX-Original-URI: /nowhere\r\nAuthorization: Bearer ${c.key}\r\n\r\n`,
  'nginx wrong method': `GET /authz/auth-request HTTP/1.1\r\nHost: authz\r\nX-Original-Method: DELETE\r\nX-Original-URI: /healthz\r\n\r\n`,
  'nginx unknown key': `GET /authz/auth-request HTTP/1.1\r\nHost: authz\r\nX-Original-Method: GET\r\nX-Original-URI: /accounts\r\nAuthorization: Bearer ${c.key.slice(0, -4)}AAAA\r\n\r\n`,
  'Traefik allow': `GET /authz/forward-auth HTTP/1.1\r\nHost: authz\r\nX-Forwarded-Method: GET\r\nX-Forwarded-Uri: /accounts\r\nX-Forwarded-For: 198.51.100.7\r\nAuthorization: Bearer ${c.key}\r\n\r\n`,
  'Traefik refusal': `GET /authz/forward-auth HTTP/1.1\r\nHost: authz\r\nX-Forwarded-Method: POST\r\nX-Forwarded-Uri: /accounts\r\nAuthorization: Bearer ${c.readOnly}\r\n\r\n`,
  'Envoy allow (GET)': `GET /authz/ext-authz/accounts HTTP/1.1\r\nHost: api.example.test\r\nAuthorization: Bearer ${c.key}\r\nContent-Length: 0\r\n\r\n`,
  'Envoy allow (POST, login token)': `POST /authz/ext-authz/accounts HTTP/1.1\r\nHost: api.example.test\r\nAuthorization: Bearer ${c.token}\r\nContent-Length: 0\r\n\r\n`,
  'Envoy allow (HEAD)': `HEAD /authz/ext-authz/accounts HTTP/1.1\r\nHost: api.example.test\r\nAuthorization: Bearer ${c.key}\r\nContent-Length: 0\r\n\r\n`,
  'Envoy public route': `GET /authz/ext-authz/healthz HTTP/1.1\r\nHost: api.example.test\r\nContent-Length: 0\r\n\r\n`,
  'Envoy refusal': `GET /authz/ext-authz/accounts HTTP/1.1\r\nHost: api.example.test\r\nContent-Length: 0\r\n\r\n`,
  'no such endpoint': `GET /authz/elsewhere HTTP/1.1\r\nHost: authz\r\n\r\n`,
});

/** A keep-alive connection that sends one request at a time and reads exactly its answer (head, and a Content-Length body unless HEAD). */
function connection(t: Test, port: number) {
  const socket = net.connect(port, '127.0.0.1');
  t.teardown(() => socket.destroy());
  let buffer = '';
  let waiting: { head: boolean; resolve: (answer: string) => void } | undefined;
  const take = () => {
    const end = buffer.indexOf('\r\n\r\n');
    if (end === -1 || waiting === undefined) return;
    const length = waiting.head ? 0 : Number(/\r\ncontent-length: (\d+)/i.exec(buffer.slice(0, end))?.[1] ?? 0);
    if (buffer.length < end + 4 + length) return;
    const answer = buffer.slice(0, end + 4 + length);
    buffer = buffer.slice(end + 4 + length);
    const { resolve } = waiting;
    waiting = undefined;
    resolve(answer);
  };
  socket.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('latin1');
    take();
  });
  return (text: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer within 10 s; so far: ${JSON.stringify(buffer)}`)), 10_000);
      waiting = {
        head: text.startsWith('HEAD '),
        resolve: (answer) => {
          clearTimeout(timer);
          resolve(answer);
        },
      };
      socket.write(text);
      take();
    });
}

/** The identity assertion's claims in their order, those of each gateway's own organization, member, key, upstream and time masked. */
function claimsOf(jwt: string): string {
  const claims = JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
  for (const name of Object.keys(claims)) if (/_id$/.test(name) || ['name', 'email', 'sid', 'aud', 'sub', 'iat', 'nbf', 'exp', 'jti'].includes(name)) claims[name] = `<${name}>`;
  return JSON.stringify(claims);
}

/** An answer with what is each gateway's own masked: the Date value, the organization id, the assertion's signature and times, a limit's reset. */
const masked = (answer: string, orgId: string) =>
  answer
    .replace(/\r\nDate: [^\r]+\r\n/, '\r\nDate: <date>\r\n')
    .replace(/\r\nx-authgate-identity: ([^\r]+)\r\n/, (_, jwt: string) => `\r\nx-authgate-identity: <signed ${claimsOf(jwt)}>\r\n`)
    .replaceAll(orgId, '<org>')
    .replace(/;t=\d+/g, ';t=<reset>');

/** Each request three times on one connection (the later ones are the kept path, with the tricks on), then once with Connection: close. */
async function answersOf(t: Test, env: Record<string, string>): Promise<{ answers: Record<string, string[]>; handedToNode: number }> {
  const s = await startAuthzGateway(t, FILE, env);
  const readOnly = (await send(`${s.gw.publicUrl}/auth/api-key`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${s.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ scopes: ['accounts:read'] }) })).json().apiKey as string;
  // The organization's id, as the port says it (then masked in every answer).
  const id = (await send(`${s.authz.url}/authz/auth-request`, { headers: { 'x-original-method': 'GET', 'x-original-uri': '/accounts', authorization: `Bearer ${s.token}` } })).headers['x-organization-id'];
  if (typeof id !== 'string' || !id.startsWith('org_')) throw new Error(`no organization id: ${String(id)}`);
  let handed = 0;
  s.gw.gateway.authzServer!.http.on('connection', () => handed++);
  const answers: Record<string, string[]> = {};
  const all = Object.entries(requests({ key: s.key, token: s.token, readOnly }));
  for (const [name, text] of all) {
    const ask = connection(t, s.authz.port);
    const got: string[] = [];
    for (let i = 0; i < 3; i++) got.push(masked(await ask(text), id));
    answers[name] = got;
  }
  // Simple heads on kept-alive connections: with the fast front on, none of these went to node.
  const handedToNode = handed;
  // A head with Connection: close is never the front's: node's answer, the same either way.
  for (const [name, text] of all) answers[name]!.push(masked(await connection(t, s.authz.port)(text.replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n')), id));
  return { answers, handedToNode };
}

t.test('every speed trick off, or any one: the same answers, byte for byte, on every protocol', async (t) => {
  const on = await answersOf(t, {});
  t.equal(on.handedToNode, 0, 'tricks on: the fast front took every one of these connections');
  // The answers themselves are what the port's other tests check; here, a sanity look.
  t.match(on.answers['nginx allow (API key)']![1], /^HTTP\/1\.1 200 OK\r\nx-organization-id: <org>\r\n/);
  t.match(on.answers['Envoy refusal']![0], /^HTTP\/1\.1 401 Unauthorized\r\n/);
  for (const off of ['all', 'kept-allows', 'header-blocks', 'fast-front']) {
    const other = await answersOf(t, { AUTHGATE_AUTHZ_SPEED_TRICKS_OFF: off });
    t.same(other.answers, on.answers, `${off} off: the same answers as with every trick on`);
    const fastFrontOff = off === 'all' || off === 'fast-front';
    t.equal(other.handedToNode > 0, fastFrontOff, `${off} off: node's server ${fastFrontOff ? 'took the connections' : 'took none'}`);
  }
});

t.test('kept-allows: the same allow object again while on, a new one each time while off', async (t) => {
  for (const [env, kept] of [[{}, true], [{ AUTHGATE_AUTHZ_SPEED_TRICKS_OFF: 'kept-allows' }, false]] as const) {
    const s = await startAuthzGateway(t, FILE, env);
    const request: EdgeRequest = { protocol: 'auth_request', method: 'GET', target: '/accounts', authorization: [`Bearer ${s.key}`], clientAddress: '203.0.113.9', clientHeaders: {}, identityHeaderSent: false, requestId: undefined };
    const decide = async () => (await s.gw.gateway.edge.decide(request)) as EdgeDecision;
    const first = await decide();
    const second = await decide();
    t.equal(first.allowed && second.allowed, true);
    t.equal(first === second, kept, `${JSON.stringify(env)}: ${kept ? 'the kept allow' : 'a new allow'}`);
    t.same(second, first, 'and the same decision either way');
  }
});

t.test('header-blocks: a kept allow\'s answer made once and marked kept while on; made anew, unmarked, while off', async (t) => {
  const allow: EdgeAllow = { allowed: true, upstreamHeaders: { 'x-organization-id': 'org_1', 'x-organization-scopes': 'accounts:read' }, removeHeaders: ['x-authgate-identity'], cacheSeconds: 0, route: '/accounts/*' };
  const on = createDecisionAnswers(true);
  const off = createDecisionAnswers(false);
  for (const protocol of ['auth_request', 'forward_auth', 'ext_authz_http'] as const) {
    const a = on(protocol, allow, false);
    t.equal(on(protocol, allow, false), a, `${protocol}, on: the same answer again`);
    t.equal(a.kept, true);
    const b = off(protocol, allow, false);
    t.not(off(protocol, allow, false), b, `${protocol}, off: a new answer`);
    t.equal(b.kept, undefined);
    t.same({ ...b }, { status: a.status, headers: a.headers, body: a.body }, 'the same status, headers in the same order, and body');
    t.same(Object.keys(b.headers), Object.keys(a.headers));
  }
});

t.test('AUTHGATE_AUTHZ_SPEED_TRICKS_OFF: the names, all, and a refusal of any other', async (t) => {
  t.same(testConfig().authzSpeedTricks, ALL_SPEED_TRICKS, 'unset: every trick on');
  t.same(testConfig({ AUTHGATE_AUTHZ_SPEED_TRICKS_OFF: 'all' }).authzSpeedTricks, { keptAllows: false, headerBlocks: false, fastFront: false });
  t.same(testConfig({ AUTHGATE_AUTHZ_SPEED_TRICKS_OFF: ' fast-front , kept-allows ' }).authzSpeedTricks, { keptAllows: false, headerBlocks: true, fastFront: false });
  t.same(speedTricksWithout(['header-blocks']), { ok: true, tricks: { keptAllows: true, headerBlocks: false, fastFront: true } });
  const refused = loadConfig({ AUTHGATE_AUTHZ_SPEED_TRICKS_OFF: 'fast-front,kept-allow' });
  t.equal(refused.ok, false);
  if (!refused.ok) t.match(refused.errors, [/^AUTHGATE_AUTHZ_SPEED_TRICKS_OFF must list only kept-allows, header-blocks, fast-front or all$/]);
});
