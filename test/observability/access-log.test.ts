import t from 'tap';
import { createAccessLog, writeMillis, type AccessRecord } from '../../src/observability/access-log.js';
import { createLogger, isoTimeNow } from '../../src/observability/logging.js';

function setup(level = 'info') {
  const lines: string[] = [];
  const destination = { write: (line: string) => void lines.push(line) };
  const logger = createLogger(level, destination).child({ environment: 'sandbox' });
  return { lines, logger, accessLog: createAccessLog(logger, destination) };
}

const record: AccessRecord = {
  reqId: 'req-1',
  method: 'GET',
  route: '/accounts',
  status: 200,
  durationMs: 1.234,
  orgId: 'org_1',
  credentialKind: 'api_key',
  keyId: 'key_1',
  authReason: undefined,
};

t.test('an access line is the line pino itself writes for the same fields', async (t) => {
  const { lines, logger, accessLog } = setup();
  accessLog(record);
  logger.info({ ...record }, 'request');
  t.equal(lines.length, 2);
  const [ours, pinos] = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  t.ok(lines[0]!.endsWith('}\n'), 'one line, newline-terminated');
  t.match(ours!['time'], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, 'ISO time, as every other line');
  delete ours!['time'];
  delete pinos!['time'];
  t.same(ours, pinos, 'same fields, same values');
  t.same(Object.keys(ours!), Object.keys(pinos!), 'in the same order');
  const { authReason: _absent, ...fields } = record;
  t.same(ours, { level: 30, service: 'authgate', environment: 'sandbox', ...fields, msg: 'request' }, 'what it says');
});

t.test('absent fields are left out, as pino leaves out undefined', async (t) => {
  const { lines, accessLog } = setup();
  accessLog({ ...record, orgId: undefined, keyId: undefined, credentialKind: 'none', authReason: 'missing', status: 401 });
  const line = JSON.parse(lines[0]!) as Record<string, unknown>;
  t.notOk('orgId' in line);
  t.notOk('keyId' in line);
  t.equal(line['authReason'], 'missing');
  t.equal(line['status'], 401);
});

t.test('no value can break out of its string', async (t) => {
  const { lines, accessLog } = setup();
  const hostile = 'x","level":60,"msg":"forged\n{"injected":true}\\\u2028\u0000';
  accessLog({ ...record, reqId: hostile, method: hostile, route: hostile, orgId: hostile, credentialKind: hostile, keyId: hostile, authReason: hostile });
  t.equal(lines.length, 1);
  t.equal(lines[0]!.split('\n').length, 2, 'still exactly one line');
  const line = JSON.parse(lines[0]!) as Record<string, unknown>;
  for (const field of ['reqId', 'method', 'route', 'orgId', 'credentialKind', 'keyId', 'authReason']) t.equal(line[field], hostile, field);
  t.equal(line['level'], 30);
  t.equal(line['msg'], 'request');
});

t.test('the log level holds: nothing below info is written when the level is above it', async (t) => {
  const { lines, logger, accessLog } = setup('warn');
  accessLog(record);
  t.same(lines, []);
  logger.level = 'info';
  accessLog(record);
  t.equal(lines.length, 1, 'a level changed at run time is honoured');
});

t.test('isoTimeNow writes what Date#toISOString writes, across seconds and milliseconds', async (t) => {
  const realNow = Date.now;
  t.teardown(() => void (Date.now = realNow));
  let mismatches = 0;
  const start = Date.UTC(2026, 11, 31, 23, 59, 58, 990); // across a second, a minute and a year
  for (let ms = start; ms < start + 2500; ms += 3) {
    Date.now = () => ms;
    if (isoTimeNow() !== new Date(ms).toISOString()) mismatches++;
    if (isoTimeNow() !== new Date(ms).toISOString()) mismatches++; // and again, from the cache
  }
  t.equal(mismatches, 0);
});

t.test('writeMillis writes what String() writes for a duration in thousandths, and String()\'s text for anything else', async (t) => {
  const buf = Buffer.alloc(64);
  const text = (ms: number) => buf.toString('latin1', 0, writeMillis(buf, 0, ms));
  let mismatches = 0;
  const check = (ms: number) => {
    if (text(ms) !== String(ms)) mismatches++;
  };
  for (let k = 0; k <= 2_000_000; k++) check(k / 1000);
  // As the recorder rounds them: Math.round(x * 1000) / 1000 of random durations, small and large.
  for (let i = 0; i < 200_000; i++) check(Math.round(Math.random() * 10 ** (i % 16) * 1000) / 1000);
  for (const odd of [-0, -1.5, 0.0001, 1.23456, 1e15, 1e21, 12345678901234.567, Number.MAX_VALUE, Number.MIN_VALUE, NaN, Infinity]) check(odd);
  t.equal(mismatches, 0);
});
