import t from 'tap';
import { closeSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ALL_SCOPES_GRANT } from '../../src/authz/scopes.js';
import { ALLOWED } from '../../src/credentials/decisions.js';
import type { Principal } from '../../src/credentials/principal.js';
import { createEdgeRecorder, type EdgeOutcome } from '../../src/edge-authz/record.js';
import { createAccessLog, type AccessLog } from '../../src/observability/access-log.js';
import { createLogSink } from '../../src/observability/log-sink.js';
import { createLogger } from '../../src/observability/logging.js';
import { createMetrics } from '../../src/observability/metrics.js';

/**
 * The recorder writes a credential's repeated outcome from parts it rendered once
 * (AccessLog.repeated): every line must be the line the full rendering writes for the same outcome.
 */

function recorder() {
  const lines: string[] = [];
  const destination = { write: (line: string) => void lines.push(line) };
  const logger = createLogger('info', destination).child({ environment: 'sandbox' });
  const full = createAccessLog(logger, destination);
  return { lines, full, record: (accessLog: AccessLog) => createEdgeRecorder(createMetrics('sandbox'), accessLog) };
}

/** What may differ between two renderings of one outcome: the time and the duration. */
const masked = (line: string) => line.replace(/"time":"[^"]+"/, '"time":"<t>"').replace(/"durationMs":[0-9.e-]+/, '"durationMs":<d>');

const key: Principal = { orgId: 'org_1', via: 'api_key', credentialId: 'key_1', scopes: ALL_SCOPES_GRANT };
const session: Principal = { orgId: 'org_"2\\', via: 'jwt', credentialId: 'ses_1', scopes: ALL_SCOPES_GRANT };
const base = { protocol: 'auth_request', method: 'GET', route: '/accounts/*', status: 200, startedAt: 0, principal: key, authDecision: ALLOWED.api_key } as const;

const outcomes: EdgeOutcome[] = [
  { ...base, requestId: 'r1' },
  { ...base, requestId: 'r2' },
  { ...base, requestId: 'r3', method: 'HEAD' },
  { ...base, requestId: 'r4', route: '/other' },
  { ...base, requestId: 'r5', route: undefined, status: 404 },
  { ...base, requestId: 'r6', status: 403 },
  { ...base, requestId: 'r7', protocol: 'ext_authz_http' },
  { ...base, requestId: 'r8', trace: { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331' } },
  { ...base, requestId: 'r9' },
  { ...base, requestId: 'r\u2028"10', principal: session, authDecision: ALLOWED.jwt },
  { ...base, requestId: 'r11', principal: session, authDecision: { kind: 'jwt', outcome: 'denied', reason: 'revoked_token' }, status: 401 },
  { ...base, requestId: 'r12', principal: null, authDecision: { kind: 'none', outcome: 'denied', reason: 'missing' }, status: 401 },
  { ...base, requestId: 'r13' },
  { ...base, requestId: 'r14', principal: session, authDecision: ALLOWED.jwt },
];

t.test('a repeated outcome\'s line is the full rendering\'s line', async (t) => {
  const { lines, full, record } = recorder();
  t.type(full.repeated, 'function', 'the access log renders repeated lines');
  // The full rendering: an access log without `repeated`.
  const plain = record((r) => full(r));
  for (const outcome of outcomes) plain(outcome);
  const expected = lines.splice(0).map(masked);
  const fast = record(full);
  for (const outcome of outcomes) fast(outcome);
  t.same(lines.map(masked), expected);
  t.equal(expected.length, outcomes.length);
  t.match(JSON.parse(lines[9]!), { reqId: 'r\u2028"10', orgId: 'org_"2\\', credentialKind: 'jwt', protocol: 'auth_request' });
});

t.test('a request without an id gets a fresh one on the repeated path too', async (t) => {
  const { lines, full, record } = recorder();
  const fast = record(full);
  fast({ ...base, requestId: undefined });
  fast({ ...base, requestId: undefined });
  const ids = lines.map((line) => (JSON.parse(line) as { reqId: string }).reqId);
  t.match(ids[0], /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  t.not(ids[0], ids[1]);
});

t.test('below info no line is written, repeated or not', async (t) => {
  const lines: string[] = [];
  const destination = { write: (line: string) => void lines.push(line) };
  const fast = createEdgeRecorder(createMetrics('sandbox'), createAccessLog(createLogger('warn', destination), destination));
  fast({ ...base, requestId: 'a' });
  fast({ ...base, requestId: 'b' });
  t.same(lines, []);
});

t.test('the repeated line the log sink takes as bytes (LogSink.room) is the full rendering\'s line, among other lines in order', async (t) => {
  const { lines, full, record } = recorder();
  const plain = record((r) => full(r));
  const hostileIds = ['r"\\\u2028\u00e9\u{1f600}', 'x'.repeat(200)];
  const all = [...outcomes, ...hostileIds.map((requestId) => ({ ...base, requestId }))];
  for (const outcome of all) plain(outcome);
  const expected = lines.splice(0).map(masked);

  const path = join(mkdtempSync(join(tmpdir(), 'authgate-record-')), 'out.log');
  const fd = openSync(path, 'a');
  t.teardown(() => closeSync(fd));
  const sink = createLogSink(fd, { windowMs: 60_000 });
  t.teardown(() => sink.flushSync());
  t.type(sink.room, 'function', 'the sink takes lines as bytes');
  const logger = createLogger('info', sink).child({ environment: 'sandbox' });
  const fast = createEdgeRecorder(createMetrics('sandbox'), createAccessLog(logger, sink));
  const written: string[] = [];
  for (const [i, outcome] of all.entries()) {
    fast(outcome);
    // pino's own lines between them, as strings: the order of lines is the order they were logged in.
    logger.warn({ n: i }, 'between');
    written.push(`between ${i}`);
  }
  sink.flushSync();
  const out = readFileSync(path, 'utf8').split('\n').filter(Boolean);
  t.equal(out.length, 2 * all.length);
  t.same(out.filter((_, i) => i % 2 === 0).map((line) => masked(`${line}\n`)), expected, 'each access line as the full rendering writes it');
  t.same(out.filter((_, i) => i % 2 === 1).map((line) => { const { msg, n } = JSON.parse(line) as { msg: string; n: number }; return `${msg} ${n}`; }), written, 'the other lines between them, in order');
  t.match(JSON.parse(out[2 * outcomes.length]!), { reqId: hostileIds[0] }, 'an id JSON must escape, escaped');
});

t.test('the repeated path counts each answer in its series as the full rendering does', async (t) => {
  const { full } = recorder();
  const count = async (accessLog: AccessLog) => {
    const metrics = createMetrics('sandbox');
    const recordOutcome = createEdgeRecorder(metrics, accessLog);
    for (const outcome of [...outcomes, ...outcomes]) recordOutcome(outcome);
    return (await metrics.registry.metrics()).split('\n').filter((line) => line.startsWith('authgate_authz_decisions_total{')).sort();
  };
  const expected = await count((r) => full(r));
  t.same(await count(full), expected);
  t.ok(expected.some((line) => /protocol="auth_request",outcome="allowed",route="\/accounts\/\*"[^}]*\} 16$/.test(line)), 'the repeated allow counted every time');
});
