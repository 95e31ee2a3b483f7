import t from 'tap';
import { createHash } from 'node:crypto';
import { generateApiKey, looksLikeApiKey, parseApiKey } from '../../src/credentials/api-keys.js';
import { sha256Hex } from '../../src/credentials/digest.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const FORMAT = /^agk_(live|test)_[0-9A-Za-z]{30}[0-9A-Za-z]{6}$/;

t.test('generated keys have the documented format per environment', async (t) => {
  for (const [environment, tag] of [['production', 'live'], ['sandbox', 'test']] as const) {
    for (let i = 0; i < 50; i++) {
      const key = generateApiKey(environment);
      t.match(key.secret, FORMAT);
      t.ok(key.secret.startsWith(`agk_${tag}_`), `${environment} key starts with agk_${tag}_`);
      t.equal(key.secret.length, 4 + 4 + 1 + 30 + 6);
      t.match(key.id, /^key_[0-9a-f]{32}$/);
    }
  }
});

t.test('the random part carries at least 128 bits', async (t) => {
  const key = generateApiKey('production');
  const random = key.secret.slice('agk_live_'.length, 'agk_live_'.length + 30);
  t.equal(random.length, 30);
  t.match(random, /^[0-9A-Za-z]{30}$/, '30 base62 characters: 30 × log2(62) ≈ 178 bits ≥ 128');
  // Every base62 character shows up somewhere over many keys: the alphabet really is base62,
  // not a smaller one that would carry fewer bits per character.
  const seen = new Set<string>();
  for (let i = 0; i < 400; i++) {
    const s = generateApiKey('sandbox').secret;
    for (const c of s.slice(9, 39)) seen.add(c);
  }
  t.equal(seen.size, 62, 'all 62 characters are used');
});

t.test('1000 generated keys (and ids) are unique', async (t) => {
  const secrets = new Set<string>();
  const ids = new Set<string>();
  const hashes = new Set<string>();
  for (let i = 0; i < 1000; i++) {
    const key = generateApiKey(i % 2 === 0 ? 'production' : 'sandbox');
    secrets.add(key.secret);
    ids.add(key.id);
    hashes.add(key.hash);
  }
  t.equal(secrets.size, 1000);
  t.equal(ids.size, 1000);
  t.equal(hashes.size, 1000);
});

t.test('parseApiKey accepts a generated key: its sha256 hex and its environment', async (t) => {
  const live = generateApiKey('production');
  t.same(parseApiKey(live.secret), { ok: true, hash: live.hash, environment: 'production' });
  const test = generateApiKey('sandbox');
  t.same(parseApiKey(test.secret), { ok: true, hash: test.hash, environment: 'sandbox' });
  const parsed = parseApiKey(live.secret);
  t.ok(parsed.ok);
  if (parsed.ok) {
    t.match(parsed.hash, /^[0-9a-f]{64}$/);
    t.equal(parsed.hash, createHash('sha256').update(live.secret).digest('hex'));
  }
});

t.test('hash is sha256Hex of the secret', async (t) => {
  for (let i = 0; i < 20; i++) {
    const key = generateApiKey(i % 2 ? 'production' : 'sandbox');
    t.equal(key.hash, sha256Hex(key.secret));
    t.equal(key.hash, createHash('sha256').update(key.secret, 'utf8').digest('hex'));
  }
});

t.test('every single-character substitution is rejected', async (t) => {
  const { secret } = generateApiKey('production');
  const alphabet = BASE62 + '_-.';
  let tried = 0;
  let failures = 0;
  for (let i = 0; i < secret.length; i++) {
    for (const c of alphabet) {
      if (c === secret[i]) continue;
      const mutated = secret.slice(0, i) + c + secret.slice(i + 1);
      const parsed = parseApiKey(mutated);
      tried++;
      if (parsed.ok) {
        failures++;
        t.fail(`substitution at ${i} with ${c} was accepted`);
        continue;
      }
      // Inside the random part or the checksum, with a base62 character, only the checksum can tell.
      if (i >= 9 && BASE62.includes(c) && parsed.reason !== 'checksum') {
        failures++;
        t.fail(`substitution at ${i} with ${c}: expected checksum, got ${parsed.reason}`);
      }
    }
  }
  t.equal(failures, 0, `all ${tried} substitutions rejected`);
  t.ok(tried > 40 * 60);
});

t.test('truncation, extra characters and wrong prefixes are rejected', async (t) => {
  const { secret } = generateApiKey('sandbox');
  for (let n = 0; n < secret.length; n++) {
    t.equal(parseApiKey(secret.slice(0, n)).ok, false, `truncated to ${n}`);
  }
  t.same(parseApiKey(secret + 'a'), { ok: false, reason: 'malformed' });
  t.same(parseApiKey('a' + secret), { ok: false, reason: 'malformed' });
  t.same(parseApiKey(secret + ' '), { ok: false, reason: 'malformed' });
  t.same(parseApiKey(' ' + secret), { ok: false, reason: 'malformed' });
  t.same(parseApiKey(secret + '\n'), { ok: false, reason: 'malformed' });
  const rest = secret.slice('agk_test_'.length);
  for (const prefix of ['agk_prod_', 'agk_TEST_', 'AGK_test_', 'agx_test_', 'agk_test', 'agk-test_', 'agktest_', 'agk__test_']) {
    t.same(parseApiKey(prefix + rest), { ok: false, reason: 'malformed' }, prefix);
  }
  // The right format with the other environment's tag: the checksum covers the tag.
  t.same(parseApiKey('agk_live_' + rest), { ok: false, reason: 'checksum' });
  t.same(parseApiKey(''), { ok: false, reason: 'malformed' });
});

t.test('displayPrefix is the first 13 characters and cannot be parsed', async (t) => {
  for (const environment of ['production', 'sandbox'] as const) {
    const key = generateApiKey(environment);
    t.equal(key.displayPrefix.length, 13);
    t.equal(key.displayPrefix, key.secret.slice(0, 13));
    t.same(parseApiKey(key.displayPrefix), { ok: false, reason: 'malformed' });
  }
});

t.test('looksLikeApiKey dispatches on the agk_ prefix only', async (t) => {
  t.ok(looksLikeApiKey(generateApiKey('production').secret));
  t.ok(looksLikeApiKey('agk_whatever'));
  t.notOk(looksLikeApiKey('eyJhbGciOiJIUzI1NiJ9.e30.sig'));
  t.notOk(looksLikeApiKey('AGK_live_x'));
  t.notOk(looksLikeApiKey(''));
});
