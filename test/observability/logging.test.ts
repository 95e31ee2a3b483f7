import t from 'tap';
import { createLogger, isoTimeNow } from '../../src/observability/logging.js';
import { captureLogs } from '../helpers/log-capture.js';

/** observability/logging.ts: the logger's format and the redaction net under every serializer. */

t.test('secrets are redacted wherever the redact paths say, at the top or one level down', async (t) => {
  const logs = captureLogs();
  const logger = createLogger('info', logs.destination);
  logger.info({ password: 'pw-top', token: 'tok-top', apiKey: 'key-top' }, 'top');
  logger.info({ body: { password: 'pw-nested', token: 'tok-nested', apiKey: 'key-nested' } }, 'nested');
  logger.info({ req: { headers: { authorization: 'Bearer req-auth', cookie: 'c=req', 'proxy-authorization': 'Basic req-proxy' } } }, 'req');
  logger.info({ headers: { authorization: 'Bearer plain-auth', cookie: 'c=plain' } }, 'headers');
  const text = logs.text();
  for (const secret of ['pw-top', 'tok-top', 'key-top', 'pw-nested', 'tok-nested', 'key-nested', 'req-auth', 'c=req', 'req-proxy', 'plain-auth', 'c=plain']) {
    t.notOk(text.includes(secret), `${secret} redacted`);
  }
  const [top] = logs.records();
  t.match(top, { level: 30, service: 'authgate', msg: 'top', password: '[redacted]', token: '[redacted]', apiKey: '[redacted]' });
});

t.test('the level filters; the time is ISO 8601 with milliseconds', async (t) => {
  const logs = captureLogs();
  const logger = createLogger('warn', logs.destination);
  logger.info('dropped');
  logger.warn('kept');
  t.equal(logs.records().length, 1);
  const time = String(logs.records()[0]?.['time']);
  t.match(time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.ok(Math.abs(Date.parse(time) - Date.now()) < 60_000, 'and it is now (within a generous minute)');
  const before = Date.now();
  const iso = isoTimeNow();
  const after = Date.now();
  t.ok(Date.parse(iso) >= before - 1 && Date.parse(iso) <= after + 1, 'isoTimeNow is now');
  t.equal(new Date(Date.parse(iso)).toISOString(), iso, 'in toISOString\'s format');
});

t.test('an error is serialized with its message and stack', async (t) => {
  const logs = captureLogs();
  createLogger('info', logs.destination).error({ err: new TypeError('boom') }, 'failed');
  t.match(logs.records()[0], { err: { type: 'TypeError', message: 'boom', stack: /TypeError: boom/ } });
});
