import t, { type Test } from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createFastFront, type FrontAnswer } from '../../src/edge-authz/fast-front.js';
import { createAuthzHttpServer } from '../../src/edge-authz/http-server.js';
import type { EdgeDecider, EdgeDecision } from '../../src/edge-authz/decision.js';
import { createEdgeRecorder, type EdgeOutcome } from '../../src/edge-authz/record.js';
import { createAccessLog } from '../../src/observability/access-log.js';
import { createLogger } from '../../src/observability/logging.js';
import { createMetrics } from '../../src/observability/metrics.js';
import type { RoutesFile } from '../../src/route-table/types.js';
import { createLocalInvalidationBus } from '../../src/store/invalidation.js';
import { createMemoryStore } from '../../src/store/memory-store.js';
import { listenAuthz } from '../helpers/authz.js';
import { send, startGateway } from '../helpers/gateway.js';
import { openRaw } from '../helpers/raw-http.js';
import { tableOf } from '../helpers/routes.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

/**
 * The authorization port's answer to a decision that throws or rejects (a defect, not a refusal:
 * every store fault is already a refusal of its own, 503), or that cannot be rendered or written:
 * a 500 problem, never an allow, the fault reported, counted and logged as any other 500 the port
 * answers (authgate_authz_decisions_total outcome "error", an access line), on the fast front's
 * path (a simple head) and on node's (a request with a body, handed over), never an unhandled
 * rejection. The decider is the one thing given here (the port's own dependency); the HTTP is
 * real, over loopback, and the recorder is the gateway's own (real metrics, real access log).
 */

const FAULT = new Error('a defect in the decision');

/** Every 'unhandledRejection' and 'uncaughtException' of this process while the file runs: none may come. */
const escaped: unknown[] = [];
process.on('unhandledRejection', (reason) => void escaped.push(reason));
process.on('uncaughtException', (error) => void escaped.push(error));

async function portWith(t: Test, decide: EdgeDecider) {
  const faults: unknown[] = [];
  const outcomes: EdgeOutcome[] = [];
  const lines: string[] = [];
  const destination = { write: (line: string) => void lines.push(line) };
  const metrics = createMetrics('sandbox');
  const recordOutcome = createEdgeRecorder(metrics, createAccessLog(createLogger('info', destination).child({ environment: 'sandbox' }), destination));
  const record = (outcome: EdgeOutcome) => {
    outcomes.push(outcome);
    recordOutcome(outcome);
  };
  const port = createAuthzHttpServer({ decide, trusted: () => true, record, onFault: (error) => faults.push(error) });
  await new Promise<void>((resolve) => port.server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    port.closeAllConnections();
    return port.close();
  });
  const series = async () => (await metrics.registry.metrics()).split('\n').filter((line) => line.startsWith('authgate_authz_decisions_total{'));
  const accessLines = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line['msg'] === 'request');
  return { port: (port.server.address() as AddressInfo).port, faults, outcomes, lines, series, accessLines };
}

const simple = (uri = '/accounts', id = 'fault-1') => `GET /authz/auth-request HTTP/1.1\r\nHost: authz\r\nX-Original-Method: GET\r\nX-Original-URI: ${uri}\r\nX-Request-Id: ${id}\r\nAuthorization: Bearer not-looked-at\r\n\r\n`;
/** A body: the fast front does not take it, node's server answers it. */
const withBody = (uri = '/accounts', id = 'fault-2') => `POST /authz/forward-auth HTTP/1.1\r\nHost: authz\r\nX-Forwarded-Method: POST\r\nX-Forwarded-Uri: ${uri}\r\nX-Request-Id: ${id}\r\nContent-Length: 2\r\n\r\n{}`;

/** The answers in `raw`, split by their heads and Content-Length bodies. */
function answers(raw: string): { status: number; head: string; body: string }[] {
  const out = [];
  let at = 0;
  for (;;) {
    const end = raw.indexOf('\r\n\r\n', at);
    if (end === -1) return out;
    const head = raw.slice(at, end);
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
    if (raw.length < end + 4 + length) return out;
    out.push({ status: Number(head.slice(9, 12)), head, body: raw.slice(end + 4, end + 4 + length) });
    at = end + 4 + length;
  }
}

/** A 500 internalError problem, with nothing of `secret` in it. */
function isInternalError(t: Test, answer: { status: number; head: string; body: string }, secret: string): void {
  t.equal(answer.status, 500, 'a fault is a 500, never an allow');
  t.match(answer.head, /\r\ncontent-type: application\/problem\+json/i);
  t.notMatch(answer.head, /\r\nx-organization-id:/i, 'no identity');
  const problem = JSON.parse(answer.body) as { code: number; status: number };
  t.equal(problem.code, 1500);
  t.equal(problem.status, 500);
  t.notOk(answer.body.includes(secret), 'the fault\'s message stays inside');
}

for (const [name, decide] of [
  ['throws', (() => { throw FAULT; }) satisfies EdgeDecider],
  ['rejects', (() => Promise.reject(FAULT)) satisfies EdgeDecider],
] as const) {
  t.test(`a decision that ${name}: 500 internalError on both paths, reported, counted and logged, the connection kept`, async (t) => {
    const { port, faults, outcomes, series, accessLines, lines } = await portWith(t, decide);
    const connection = await openRaw(port);
    t.teardown(() => connection.destroy());
    // Fast front, node's path, then the fast front's path again would be closed to it (handed
    // over for good): a second simple request on node's path shows the connection is still served.
    connection.write(simple());
    t.ok(await connection.until((raw) => answers(raw).length === 1), 'the simple request answered');
    connection.write(withBody());
    t.ok(await connection.until((raw) => answers(raw).length === 2), 'the request with a body answered');
    connection.write(simple('/accounts', 'fault-3'));
    t.ok(await connection.until((raw) => answers(raw).length === 3), 'and the next one on the same connection');
    for (const answer of answers(connection.received())) {
      isInternalError(t, answer, FAULT.message);
      t.notMatch(answer.head, /\r\nconnection: close/i, 'the connection is kept');
    }
    t.equal(faults.length, 3, 'every fault reported');
    t.ok(faults.every((fault) => fault === FAULT));
    // As the decider's own finish records a refusal of a request no route was found for.
    t.same(
      outcomes.map((o) => ({ protocol: o.protocol, method: o.method, route: o.route, status: o.status, requestId: o.requestId, principal: o.principal, authDecision: o.authDecision })),
      [
        { protocol: 'auth_request', method: 'GET', route: undefined, status: 500, requestId: 'fault-1', principal: null, authDecision: undefined },
        { protocol: 'forward_auth', method: 'POST', route: undefined, status: 500, requestId: 'fault-2', principal: null, authDecision: undefined },
        { protocol: 'auth_request', method: 'GET', route: undefined, status: 500, requestId: 'fault-3', principal: null, authDecision: undefined },
      ],
      'each fault recorded as the 500 it was answered with',
    );
    t.ok(outcomes.every((o) => typeof o.startedAt === 'number' && o.startedAt <= performance.now()), 'with the time it arrived');
    const counted = await series();
    t.ok(counted.some((line) => /^authgate_authz_decisions_total\{protocol="auth_request",outcome="error",route="unmatched"[^}]*\} 2$/.test(line)), 'counted as errors (the fast front\'s path)');
    t.ok(counted.some((line) => /^authgate_authz_decisions_total\{protocol="forward_auth",outcome="error",route="unmatched"[^}]*\} 1$/.test(line)), 'counted as errors (node\'s path)');
    t.same(
      accessLines().map(({ reqId, method, route, status, protocol }) => ({ reqId, method, route, status, protocol })),
      [
        { reqId: 'fault-1', method: 'GET', route: 'unmatched', status: 500, protocol: 'auth_request' },
        { reqId: 'fault-2', method: 'POST', route: 'unmatched', status: 500, protocol: 'forward_auth' },
        { reqId: 'fault-3', method: 'GET', route: 'unmatched', status: 500, protocol: 'auth_request' },
      ],
      'an access line for each',
    );
    t.ok(accessLines().every((line) => typeof line['durationMs'] === 'number'));
    t.notOk(lines.join('').includes(FAULT.message) || counted.join('').includes(FAULT.message), 'the fault\'s message is in no access line and no label');
    t.same(escaped, [], 'no unhandled rejection, no uncaught exception');
  });

  t.test(`a decision that ${name} for nginx's sub-request announcing a body: the 500 closes the connection`, async (t) => {
    const { port, faults, outcomes } = await portWith(t, decide);
    const connection = await openRaw(port);
    t.teardown(() => connection.destroy());
    // The body nginx announces never comes: the answer must end the connection, a fault's too.
    connection.write('GET /authz/auth-request HTTP/1.1\r\nHost: authz\r\nX-Original-Method: GET\r\nX-Original-URI: /accounts\r\nContent-Length: 5\r\n\r\n');
    t.ok(await connection.until((raw) => answers(raw).length === 1), 'answered');
    const [answer] = answers(connection.received());
    if (answer !== undefined) isInternalError(t, answer, FAULT.message);
    t.match(answer?.head, /\r\nconnection: close/i, 'Connection: close');
    t.ok(await connection.closedWithin(5000), 'and the connection ends');
    t.equal(faults.length, 1);
    t.match(outcomes, [{ protocol: 'auth_request', status: 500 }]);
  });
}

/** A deny whose body is no string: rendering its answer throws (a TypeError from Buffer.byteLength). */
const unrenderable = { allowed: false, status: 403, headers: {}, body: undefined, route: undefined } as unknown as EdgeDecision;
/**
 * An allow whose upstream header node refuses to write (ERR_INVALID_CHAR), a line break in it: on
 * both paths a fault, never a header injected into the answer (the fast front writes heads itself).
 */
const unwritable: EdgeDecision = { allowed: true, upstreamHeaders: { 'x-organization-id': 'org_1\r\nx-injected: 1' }, removeHeaders: [], cacheSeconds: 0, route: '/accounts/*' };
/** What the deciders below answer to any other target: a plain allow on a public route. */
const fine: EdgeDecision = { allowed: true, upstreamHeaders: {}, removeHeaders: [], cacheSeconds: 0, route: '/open' };

for (const [name, bad, paths] of [
  ['an answer that cannot be rendered', unrenderable, ['front', 'node']],
  ['an answer node refuses to write', unwritable, ['front', 'node']],
] as const) {
  for (const timing of ['at once', 'after a wait'] as const) {
    t.test(`${name}, decided ${timing}: a 500 or a closed connection, never an unhandled rejection, and the next request answered`, async (t) => {
      const decide: EdgeDecider = (request) => {
        const decision = request.target === '/bad' ? bad : fine;
        return timing === 'at once' ? decision : Promise.resolve(decision);
      };
      const { port, faults, outcomes } = await portWith(t, decide);
      for (const path of paths) {
        const before = faults.length;
        const connection = await openRaw(port);
        t.teardown(() => connection.destroy());
        connection.write(path === 'front' ? simple('/bad') : withBody('/bad'));
        const answered = await connection.until((raw) => answers(raw).length === 1, 5000);
        // A 500 wherever nothing was written yet: both cases here fail before any byte is.
        t.ok(answered, `${path}: answered`);
        t.equal(faults.length, before + 1, `${path}: the fault reported`);
        const fault = faults.at(-1);
        const [answer] = answers(connection.received());
        if (answer !== undefined) isInternalError(t, answer, fault instanceof Error ? fault.message : String(fault));
        t.notMatch(connection.received(), /x-injected/i, `${path}: nothing of the bad answer written`);
        t.match(outcomes.at(-1), { status: 500, route: undefined }, `${path}: recorded as the 500 it was answered with`);
        // The process goes on: a new connection's request is answered as usual.
        const next = await openRaw(port);
        t.teardown(() => next.destroy());
        next.write(path === 'front' ? simple('/open') : withBody('/open'));
        t.ok(await next.until((raw) => answers(raw).length === 1, 5000), `${path}: the next request answered`);
        t.equal(answers(next.received())[0]?.status, 200);
      }
      t.same(escaped, [], 'no unhandled rejection, no uncaught exception');
    });
  }
}

t.test('a fault before any decision (the peer\'s check throws): a 500 from node\'s path, reported and counted, never an uncaught exception', async (t) => {
  const faults: unknown[] = [];
  const outcomes: EdgeOutcome[] = [];
  const decide: EdgeDecider = () => fine;
  const trusted = (): boolean => {
    throw FAULT;
  };
  const port = createAuthzHttpServer({ decide, trusted, record: (outcome) => void outcomes.push(outcome), onFault: (error) => faults.push(error) });
  await new Promise<void>((resolve) => port.server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => (port.closeAllConnections(), port.close()));
  const address = (port.server.address() as AddressInfo).port;
  // A simple head (the fast front's, were the peer trusted), one with a body, one outside the endpoints.
  for (const request of [simple('/accounts', 'before-1'), withBody('/accounts', 'before-2'), 'GET /elsewhere HTTP/1.1\r\nHost: authz\r\n\r\n']) {
    const before = faults.length;
    const connection = await openRaw(address);
    t.teardown(() => connection.destroy());
    connection.write(request);
    t.ok(await connection.until((raw) => answers(raw).length === 1, 5000), 'answered');
    isInternalError(t, answers(connection.received())[0]!, FAULT.message);
    t.equal(faults.length, before + 1, 'the fault reported once');
  }
  // Counted where the endpoint is known, as every 500 the port answers.
  t.match(outcomes, [{ protocol: 'auth_request', status: 500, route: undefined }, { protocol: 'forward_auth', status: 500, route: undefined }]);
  t.equal(outcomes.length, 2);
  t.same(escaped, [], 'no unhandled rejection, no uncaught exception');
});

t.test('the fast front\'s own faults (respond throws or rejects despite its contract, an answer it cannot write): the connection ends, the fault reported, nothing escapes', async (t) => {
  const faults: unknown[] = [];
  const broken = { status: 200, headers: null, body: '' } as unknown as FrontAnswer;
  const respond = (request: { url: string }): FrontAnswer | Promise<FrontAnswer> => {
    switch (request.url) {
      case '/throws':
        throw FAULT;
      case '/rejects':
        return Promise.reject(FAULT);
      case '/broken-now':
        return broken;
      case '/broken-later':
        return Promise.resolve(broken);
      default:
        return { status: 204, headers: {}, body: '' };
    }
  };
  const http = createServer((_request, response) => response.end());
  const front = createFastFront({ http, takes: () => true, respond, onFault: (error) => faults.push(error), keepAliveTimeoutMs: 5000 });
  await new Promise<void>((resolve) => front.server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => (front.closeAllConnections(), front.close()));
  const port = (front.server.address() as AddressInfo).port;
  for (const url of ['/throws', '/rejects', '/broken-now', '/broken-later']) {
    const before = faults.length;
    const c = await openRaw(port);
    t.teardown(() => c.destroy());
    // A request answered first: the faulty one is not the connection's first.
    c.write('GET /fine HTTP/1.1\r\nHost: a\r\n\r\n');
    t.ok(await c.until((raw) => answers(raw).length === 1, 5000), `${url}: the request before answered`);
    c.write(`GET ${url} HTTP/1.1\r\nHost: a\r\n\r\n`);
    t.ok(await c.closedWithin(5000), `${url}: the connection ends`);
    t.equal(answers(c.received()).length, 1, `${url}: nothing written for it`);
    t.equal(faults.length, before + 1, `${url}: the fault reported`);
    const next = await openRaw(port);
    t.teardown(() => next.destroy());
    next.write('GET /fine HTTP/1.1\r\nHost: a\r\n\r\n');
    t.ok(await next.until((raw) => answers(raw).length === 1, 5000), `${url}: a new connection answered`);
  }
  t.same(escaped, [], 'no unhandled rejection, no uncaught exception');
});

t.test('the decider\'s own 500 (a dependency fails with no store error): a real gateway over real HTTP, counted, logged, reported, nothing of the error sent', async (t) => {
  // The identity signer reads the organization's profile from the store: here that read fails
  // with a defect of its own (a TypeError, no StoreUnavailable), which no refusal covers.
  const SECRET = 'profile read failed: org_secret_detail_4711';
  const store = createMemoryStore();
  let failing = false;
  const storage = {
    store: { ...store, findOrganizationById: (id: string) => (failing ? Promise.reject(new TypeError(SECRET)) : store.findOrganizationById(id)) },
    bus: createLocalInvalidationBus(),
  };
  const routes: RoutesFile = { version: 1, scopes: { 'accounts:read': 'Read accounts' }, routes: [{ id: 'accounts', path: '/accounts', match: 'subtree', methods: { GET: 'accounts:read', POST: 'accounts:read' } }] };
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const gw = await startGateway(t, { env: { AUTHGATE_AUTHZ_PORT: '0' }, upstream, deps: { routes: tableOf(routes, upstream.url), storage } });
  const authz = await listenAuthz(gw);
  const org = await gw.createOrganization();
  const key = (await gw.createApiKey(await gw.login(org.email, org.password))).apiKey;
  failing = true;
  const connection = await openRaw(authz.port);
  t.teardown(() => connection.destroy());
  // The fast front's path (a simple head), then node's (a body).
  connection.write(`GET /authz/auth-request HTTP/1.1\r\nHost: authz\r\nX-Original-Method: GET\r\nX-Original-URI: /accounts/1\r\nX-Request-Id: decider-fault-1\r\nAuthorization: Bearer ${key}\r\n\r\n`);
  t.ok(await connection.until((raw) => answers(raw).length === 1), 'the simple request answered');
  connection.write(`POST /authz/forward-auth HTTP/1.1\r\nHost: authz\r\nX-Forwarded-Method: GET\r\nX-Forwarded-Uri: /accounts/2\r\nX-Request-Id: decider-fault-2\r\nAuthorization: Bearer ${key}\r\nContent-Length: 2\r\n\r\n{}`);
  t.ok(await connection.until((raw) => answers(raw).length === 2), 'the request with a body answered');
  for (const answer of answers(connection.received())) {
    isInternalError(t, answer, SECRET);
    t.notMatch(answer.head, /\r\nx-authgate-identity:/i, 'no assertion');
  }
  t.notOk(connection.received().includes('org_secret_detail'), 'nothing of the error sent');

  const metrics = (await send(`${gw.opsUrl}/metrics`)).body;
  t.match(metrics, /authgate_authz_decisions_total\{protocol="auth_request",outcome="error",route="\/accounts\/\*"[^}]*\} 1/, 'counted as an error (the fast front)');
  t.match(metrics, /authgate_authz_decisions_total\{protocol="forward_auth",outcome="error",route="\/accounts\/\*"[^}]*\} 1/, 'counted as an error (node\'s path)');
  t.notOk(metrics.includes('org_secret_detail'), 'in no label');
  const records = gw.logs.records();
  for (const [reqId, protocol] of [['decider-fault-1', 'auth_request'], ['decider-fault-2', 'forward_auth']] as const) {
    t.match(records.find((line) => line['reqId'] === reqId), { msg: 'request', protocol, method: 'GET', route: '/accounts/*', status: 500, orgId: org.id, credentialKind: 'api_key' }, `${reqId}: the access line`);
  }
  const reported = records.filter((line) => line['event'] === 'authz.fault');
  t.equal(reported.length, 2, 'each fault reported once (authz.fault)');
  t.ok(reported.every((line) => line['msg'] === 'the authorization decision failed'), 'by the decider (its failure()), not the port\'s last resort');
  t.ok(reported.every((line) => JSON.stringify(line).includes(SECRET)), 'the report carries the error, for the operator');
  t.notOk(records.filter((line) => line['event'] !== 'authz.fault').some((line) => JSON.stringify(line).includes('org_secret_detail')), 'and no other line does');

  // The dependency back: the same credential allowed, on the same connection.
  failing = false;
  connection.write(`GET /authz/auth-request HTTP/1.1\r\nHost: authz\r\nX-Original-Method: GET\r\nX-Original-URI: /accounts/1\r\nAuthorization: Bearer ${key}\r\n\r\n`);
  t.ok(await connection.until((raw) => answers(raw).length === 3), 'answered');
  t.equal(answers(connection.received())[2]?.status, 200, 'allowed again');
  t.same(escaped, [], 'no unhandled rejection, no uncaught exception');
});
