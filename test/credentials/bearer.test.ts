import t from 'tap';
import { readBearer } from '../../src/credentials/bearer.js';

const raw = (value: string) => ['Host', 'example.test', 'Authorization', value];

t.test('the scheme is case-insensitive', async (t) => {
  for (const header of ['Bearer x', 'bearer x', 'BEARER x', 'bEaReR x']) {
    t.same(readBearer(header, raw(header)), { ok: true, token: 'x' }, header);
  }
});

t.test('real-looking tokens come back whole', async (t) => {
  const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJzIn0.abc-_DEF123';
  t.same(readBearer(`Bearer ${jwt}`, raw(`Bearer ${jwt}`)), { ok: true, token: jwt });
  const key = 'agk_live_0123456789ABCDEFGHIJabcdefghijABCDEF';
  t.same(readBearer(`Bearer ${key}`, raw(`Bearer ${key}`)), { ok: true, token: key });
  t.same(readBearer('Bearer abc+/==', raw('Bearer abc+/==')), { ok: true, token: 'abc+/==' });
});

t.test('a missing or empty header is missing', async (t) => {
  t.same(readBearer(undefined, []), { ok: false, reason: 'missing' });
  t.same(readBearer('', raw('')), { ok: false, reason: 'missing' });
});

t.test('another scheme is not_bearer', async (t) => {
  for (const header of ['Basic abc', 'Digest username="a"', 'Token abc', 'Bearerx', 'Bearer_abc']) {
    t.same(readBearer(header, raw(header)), { ok: false, reason: 'not_bearer' }, header);
  }
});

t.test('a bearer header without exactly one sane token is malformed', async (t) => {
  const cases = [
    'Bearer',
    'Bearer ',
    'Bearer a b',
    'Bearer ' + 'a'.repeat(5000),
    'Bearer abc\u0000def',
    'Bearer abc\u0001',
    'Bearer abc\u007f',
    'Bearer ab\tc',
    'Bearer abc\r\nX-Injected: 1',
    'Bearer a=b',
    'Bearer "abc"',
    'Bearer abc,def',
  ];
  for (const header of cases) {
    t.same(readBearer(header, raw(header)), { ok: false, reason: 'malformed' }, JSON.stringify(header.slice(0, 30)));
  }
});

t.test('duplicate Authorization headers are refused, whatever their case', async (t) => {
  t.same(readBearer('Bearer a', ['Authorization', 'Bearer a', 'authorization', 'Bearer b']), { ok: false, reason: 'duplicate' });
  t.same(readBearer('Bearer a', ['AUTHORIZATION', 'Bearer a', 'Accept', '*/*', 'Authorization', 'Bearer a']), { ok: false, reason: 'duplicate' });
  // One Authorization among other headers (whose values may look like names) is fine.
  t.same(readBearer('Bearer a', ['X-Note', 'Authorization', 'Authorization', 'Bearer a']), { ok: true, token: 'a' });
  t.same(readBearer('Bearer a', ['Proxy-Authorization', 'Basic x', 'Authorization', 'Bearer a']), { ok: true, token: 'a' });
});
