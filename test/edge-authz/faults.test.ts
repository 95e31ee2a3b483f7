import t, { type Test } from 'tap';
import type { AddressInfo } from 'node:net';
import { createAuthzHttpServer } from '../../src/edge-authz/http-server.js';
import type { EdgeDecider } from '../../src/edge-authz/decision.js';
import type { EdgeOutcome } from '../../src/edge-authz/record.js';
import { openRaw } from '../helpers/raw-http.js';

/**
 * The authorization port's answer to a decision that throws or rejects (a defect, not a refusal:
 * every store fault is already a refusal of its own, 503): a 500 problem, never an allow, the
 * fault reported, on the fast front's path (a simple head) and on node's (a request with a body,
 * handed over), the connection kept for the next request. The decider is the one thing given
 * here (the port's own dependency); the HTTP is real, over loopback.
 */

const FAULT = new Error('a defect in the decision');

async function portWith(t: Test, decide: EdgeDecider) {
  const faults: unknown[] = [];
  const outcomes: EdgeOutcome[] = [];
  const port = createAuthzHttpServer({ decide, trusted: () => true, record: (outcome) => outcomes.push(outcome), onFault: (error) => faults.push(error) });
  await new Promise<void>((resolve) => port.server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    port.closeAllConnections();
    return port.close();
  });
  return { port: (port.server.address() as AddressInfo).port, faults, outcomes };
}

const simple = 'GET /authz/auth-request HTTP/1.1\r\nHost: authz\r\nX-Original-Method: GET\r\nX-Original-URI: /accounts\r\nAuthorization: Bearer not-looked-at\r\n\r\n';
/** A body: the fast front does not take it, node's server answers it. */
const withBody = `POST /authz/forward-auth HTTP/1.1\r\nHost: authz\r\nX-Forwarded-Method: POST\r\nX-Forwarded-Uri: /accounts\r\nContent-Length: 2\r\n\r\n{}`;

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

for (const [name, decide] of [
  ['throws', (() => { throw FAULT; }) satisfies EdgeDecider],
  ['rejects', (() => Promise.reject(FAULT)) satisfies EdgeDecider],
] as const) {
  t.test(`a decision that ${name}: 500 internalError on both paths, reported, the connection kept`, async (t) => {
    const { port, faults, outcomes } = await portWith(t, decide);
    const connection = await openRaw(port);
    t.teardown(() => connection.destroy());
    // Fast front, node's path, then the fast front's path again would be closed to it (handed
    // over for good): a second simple request on node's path shows the connection is still served.
    connection.write(simple);
    t.ok(await connection.until((raw) => answers(raw).length === 1), 'the simple request answered');
    connection.write(withBody);
    t.ok(await connection.until((raw) => answers(raw).length === 2), 'the request with a body answered');
    connection.write(simple);
    t.ok(await connection.until((raw) => answers(raw).length === 3), 'and the next one on the same connection');
    for (const answer of answers(connection.received())) {
      t.equal(answer.status, 500, 'a fault is a 500, never an allow');
      t.match(answer.head, /\r\ncontent-type: application\/problem\+json/i);
      t.notMatch(answer.head, /\r\nx-organization-id:/i, 'no identity');
      t.notMatch(answer.head, /\r\nconnection: close/i, 'the connection is kept');
      const problem = JSON.parse(answer.body) as { code: number; status: number };
      t.equal(problem.code, 1500);
      t.equal(problem.status, 500);
      t.notMatch(answer.body, /a defect in the decision/, 'the fault\'s message stays inside');
    }
    t.equal(faults.length, 3, 'every fault reported');
    t.ok(faults.every((fault) => fault === FAULT));
    t.same(outcomes.map((o) => o.status), [], 'no decision outcome recorded for a fault (the fault is reported instead)');
  });
}
