import t from 'tap';
import { privateCacheControl, varyWith } from '../../src/request/cache-headers.js';
import { upstreamAnswerHeaders } from '../../src/proxy/forward.js';

/** request/cache-headers.ts alone; test/e2e/shared-caches.test.ts has them over real HTTP, behind a cache. */

t.test('varyWith merges, never overwrites', async (t) => {
  t.equal(varyWith(undefined, 'Origin'), 'Origin');
  t.equal(varyWith('', 'Origin'), 'Origin');
  t.equal(varyWith('Accept-Encoding', 'Origin'), 'Accept-Encoding, Origin');
  t.equal(varyWith('accept-encoding,ORIGIN', 'Origin'), 'accept-encoding,ORIGIN', 'already named, in any case');
  t.equal(varyWith(['Accept', 'Origin'], 'Authorization'), 'Accept, Origin, Authorization', 'repeated fields as one list');
  t.equal(varyWith('*', 'Origin'), '*');
  t.equal(varyWith('Accept, *', 'Origin'), '*');
  t.equal(varyWith('X-Origin-Thing', 'Origin'), 'X-Origin-Thing, Origin', 'a longer name is not the name');
  t.equal(varyWith(' Origin ', 'origin'), ' Origin ');
});

t.test('privateCacheControl: private to the credential, or no-store left alone', async (t) => {
  const cases: Array<[string | string[], string | null]> = [
    ['public, max-age=60', 'private, max-age=60'],
    ['max-age=60', 'private, max-age=60'],
    ['s-maxage=600', 'private'],
    ['public', 'private'],
    ['max-age=60, S-MaxAge=600, must-revalidate, proxy-revalidate', 'private, max-age=60, must-revalidate, proxy-revalidate'],
    ['private', 'private'],
    ['Private , max-age=5', 'Private , max-age=5'],
    ['public, private', 'public, private'],
    ['private="set-cookie", max-age=5', 'private, max-age=5'],
    ['no-cache="x-a, private", max-age=0', 'private, no-cache="x-a, private", max-age=0'],
    ['no-cache="a\\"private, b", public', 'private, no-cache="a\\"private, b"'],
    ['no-store', null],
    ['NO-STORE, public', null],
    ['max-age=60, no-store', null],
    [['public', 'max-age=60'], 'private, max-age=60'],
    ['', 'private'],
    [',, ,', 'private'],
    ['stale-while-revalidate=30,max-age=1', 'private, stale-while-revalidate=30, max-age=1'],
    ['max-age="unterminated', 'private, max-age="unterminated'],
  ];
  for (const [value, expected] of cases) {
    t.equal(privateCacheControl(value), expected, JSON.stringify(value));
    t.equal(privateCacheControl(value), expected, `${JSON.stringify(value)}, again (kept result)`);
  }
});

t.test('upstreamAnswerHeaders: the one copy drops what the client must not get', async (t) => {
  const upstream = {
    connection: 'keep-alive, x-hop',
    'x-hop': '1',
    'keep-alive': 'timeout=5',
    'transfer-encoding': 'chunked',
    'access-control-allow-origin': '*',
    'cdn-cache-control': 'max-age=600',
    'surrogate-control': 'max-age=600',
    ratelimit: 'limit=1',
    'ratelimit-policy': '1;w=1',
    'cache-control': 'public, max-age=60',
    vary: 'Accept-Encoding',
    etag: '"e"',
  };
  t.same(upstreamAnswerHeaders(upstream, true, true), { 'cache-control': 'private, max-age=60', vary: 'Accept-Encoding, Authorization, Origin', etag: '"e"' });
  t.same(upstreamAnswerHeaders(upstream, false, false), {
    ratelimit: 'limit=1',
    'ratelimit-policy': '1;w=1',
    'cache-control': 'private, max-age=60',
    vary: 'Accept-Encoding, Authorization',
    etag: '"e"',
  });
  t.same(upstreamAnswerHeaders({ etag: '"e"' }, false, false), { etag: '"e"' }, 'nothing to keep: as it came');
  t.same(upstreamAnswerHeaders({ etag: '"e"' }, false, true), { etag: '"e"', vary: 'Origin' });
  t.same(upstreamAnswerHeaders({ 'cache-control': 'no-store', vary: 'Accept' }, false, false), { 'cache-control': 'no-store', vary: 'Accept' });
});
