import t from 'tap';
import { formatRateLimit, lowerOf, notAbove, parseRateLimit } from '../../src/limits/rate-limit.js';
import { loadConfig } from '../../src/config/load.js';

t.test('a rate limit as written: count per window in s, m or h, kept as seconds', async (t) => {
  t.same(parseRateLimit('600/60s'), { count: 600, windowSeconds: 60 });
  t.same(parseRateLimit('100/1m'), { count: 100, windowSeconds: 60 });
  t.same(parseRateLimit('5000/1h'), { count: 5000, windowSeconds: 3600 });
  t.same(parseRateLimit('1000000000/24h'), { count: 1_000_000_000, windowSeconds: 86_400 }, 'the largest');
  for (const bad of ['', 'off', '600', '600/60', '0/60s', '600/0s', '06/60s', '600/060s', '-1/60s', '600/60d', '600 /60s', '600/60S', '1000000001/1s', '1/86401s', '1/25h', '1/1441m', '1.5/60s', '600/60s ', '99999999999/1s']) {
    t.equal(parseRateLimit(bad), undefined, JSON.stringify(bad));
  }
  t.equal(formatRateLimit({ count: 100, windowSeconds: 60 }), '100/60s');
  t.equal(formatRateLimit(parseRateLimit('3/2h')!), '3/7200s', 'one form stored and shown');
});

t.test('compared by rate: a key may be stricter than its organization, never looser', async (t) => {
  const r = (text: string) => parseRateLimit(text)!;
  t.ok(notAbove(r('10/1s'), r('600/60s')), 'the same rate');
  t.ok(notAbove(r('5/1s'), r('600/60s')));
  t.notOk(notAbove(r('11/1s'), r('600/60s')));
  t.ok(notAbove(r('1000/1h'), r('1/1s')), '1000 an hour is below one a second');
  t.notOk(notAbove(r('1000000000/1s'), r('999999999/1s')), 'no overflow at the largest values');
  t.equal(lowerOf(r('10/1s'), r('5/1s')).count, 5);
  t.equal(lowerOf(r('10/1s'), r('600/60s')).count, 10, 'a tie keeps the first');
});

t.test('AUTHGATE_RATE_LIMIT: off by default; a limit, or a refusal that names the form and not the value', async (t) => {
  const load = (env: Record<string, string>) => loadConfig({ ...env });
  const off = load({});
  t.ok(off.ok && off.config.rateLimit.default === undefined, 'off by default');
  const on = load({ AUTHGATE_RATE_LIMIT: '100/1m' });
  t.ok(on.ok && on.config.rateLimit.default?.count === 100 && on.config.rateLimit.default.windowSeconds === 60);
  t.ok(load({ AUTHGATE_RATE_LIMIT: 'off' }).ok);
  const bad = load({ AUTHGATE_RATE_LIMIT: '100 per minute' });
  t.notOk(bad.ok);
  if (!bad.ok) {
    t.match(bad.errors.join('\n'), /AUTHGATE_RATE_LIMIT must be `off` or `<count>\/<window>`/);
    t.notMatch(bad.errors.join('\n'), /per minute/);
  }
});
