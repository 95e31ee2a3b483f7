import t from 'tap';
import { createHash, randomUUID } from 'node:crypto';
import { apiKeyLookupHash, apiKeyShape, generateApiKey, looksLikeApiKey, parseApiKey } from '../../src/credentials/api-keys.js';
import { SHARD_TAG_ALPHABET, SHARD_TAG_SOURCE, shardTagIn, shardTagOf } from '../../src/store/shard-tag.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** The organization the keys below belong to, and its shard tag. */
const ORG = 'org_0123456789abcdef0123456789abcdef';
const TAG = shardTagOf(ORG);
const FORMAT = new RegExp(`^agk_(live|test)_${SHARD_TAG_SOURCE}_[0-9A-Za-z]{30}[0-9A-Za-z]{6}$`);
/** `agk_live_` / `agk_test_`: the head before the shard tag. */
const HEAD_LENGTH = 'agk_live_'.length;
/** Where the 30 random characters start: after the head, the 3-character tag and its `_`. */
const RANDOM_START = HEAD_LENGTH + TAG.length + 1;
const KEY_LENGTH = RANDOM_START + 30 + 6;

/** The lookup hash computed independently: the tag, a dot, 22 base64url characters of the key's SHA-256. */
const expectedHash = (tag: string, secret: string) => `${tag}.${createHash('sha256').update(secret, 'utf8').digest('base64url').slice(0, 22)}`;

/** The CRC-32 checksum as six base62 characters, computed independently: to build keys with a valid checksum. */
function crcChecksum(body: string): string {
  let crc = 0xffffffff;
  for (let i = 0; i < body.length; i++) {
    crc ^= body.charCodeAt(i);
    for (let k = 0; k < 8; k++) crc = crc & 1 ? 0xedb88320 ^ (crc >>> 1) : crc >>> 1;
  }
  let n = (crc ^ 0xffffffff) >>> 0;
  let out = '';
  for (let i = 0; i < 6; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

t.test('the checksum is CRC-32 (IEEE): the reference pinned by known vectors, and every key body checked against it', async (t) => {
  // The standard check values of CRC-32/ISO-HDLC, as six base62 characters.
  const base62 = (n: number) => Array.from({ length: 6 }, (_, i) => BASE62[Math.floor(n / 62 ** (5 - i)) % 62]).join('');
  t.equal(crcChecksum('123456789'), base62(0xcbf43926));
  t.equal(crcChecksum('The quick brown fox jumps over the lazy dog'), base62(0x414fa339));
  t.equal(crcChecksum(''), base62(0));
  // Bodies over the whole alphabet, each tag position and both environments: the gateway's
  // checksum (zlib.crc32 since the hand-written table went) accepts exactly the reference's.
  for (let i = 0; i < 2000; i++) {
    const random = Array.from({ length: 30 }, (_, j) => BASE62[(i * 31 + j * 17 + (i >> 3)) % 62]).join('');
    const body = `agk_${i % 2 === 0 ? 'live' : 'test'}_${TAG}_${random}`;
    const right = crcChecksum(body);
    const parsed = parseApiKey(body + right);
    if (!parsed.ok) t.fail(`body ${i}: the reference checksum is refused`);
    const wrong = right.slice(0, 5) + BASE62[(BASE62.indexOf(right[5]!) + 1) % 62];
    if (parseApiKey(body + wrong).ok) t.fail(`body ${i}: a wrong checksum is accepted`);
  }
  t.pass('2000 bodies');
});

t.test('the test pins a real tag', async (t) => {
  t.match(TAG, new RegExp(`^${SHARD_TAG_SOURCE}$`));
  t.equal(KEY_LENGTH, 49, 'agk_ + live/test + _ + tag + _ + 30 + 6');
});

t.test('generated keys have the documented format per environment, with the organization\'s tag', async (t) => {
  for (const [environment, envTag] of [['production', 'live'], ['sandbox', 'test']] as const) {
    for (let i = 0; i < 50; i++) {
      const key = generateApiKey(environment, TAG);
      t.match(key.secret, FORMAT);
      t.ok(key.secret.startsWith(`agk_${envTag}_${TAG}_`), `${environment} key starts with agk_${envTag}_${TAG}_`);
      t.equal(key.secret.split('_')[2], TAG, 'the third segment is the shard tag');
      t.equal(key.secret.length, 4 + 4 + 1 + 3 + 1 + 30 + 6);
      t.match(key.id, /^key_[0-9a-f]{32}$/);
    }
  }
});

t.test('every organization\'s keys carry its own tag, in the key and in its lookup hash', async (t) => {
  const tags = new Set<string>();
  for (let i = 0; i < 50; i++) {
    const orgId = `org_${randomUUID().replaceAll('-', '')}`;
    const tag = shardTagOf(orgId);
    tags.add(tag);
    const key = generateApiKey(i % 2 === 0 ? 'production' : 'sandbox', tag);
    t.equal(key.secret.slice(HEAD_LENGTH, HEAD_LENGTH + 4), `${tag}_`);
    t.equal(shardTagIn(key.hash), tag);
    const parsed = parseApiKey(key.secret);
    t.ok(parsed.ok && shardTagIn(parsed.hash) === tag, 'parsing finds the tag again');
  }
  t.ok(tags.size > 40, 'different organizations, different tags');
});

t.test('the random part carries at least 128 bits', async (t) => {
  const key = generateApiKey('production', TAG);
  const random = key.secret.slice(RANDOM_START, RANDOM_START + 30);
  t.equal(random.length, 30);
  t.match(random, /^[0-9A-Za-z]{30}$/, '30 base62 characters: 30 × log2(62) ≈ 178 bits ≥ 128');
  // Every base62 character shows up somewhere over many keys: the alphabet really is base62,
  // not a smaller one that would carry fewer bits per character.
  const seen = new Set<string>();
  for (let i = 0; i < 400; i++) {
    const s = generateApiKey('sandbox', TAG).secret;
    for (const c of s.slice(RANDOM_START, RANDOM_START + 30)) seen.add(c);
  }
  t.equal(seen.size, 62, 'all 62 characters are used');
});

t.test('1000 generated keys (and ids) are unique', async (t) => {
  const secrets = new Set<string>();
  const ids = new Set<string>();
  const hashes = new Set<string>();
  for (let i = 0; i < 1000; i++) {
    const key = generateApiKey(i % 2 === 0 ? 'production' : 'sandbox', TAG);
    secrets.add(key.secret);
    ids.add(key.id);
    hashes.add(key.hash);
  }
  t.equal(secrets.size, 1000);
  t.equal(ids.size, 1000);
  t.equal(hashes.size, 1000);
});

t.test('parseApiKey accepts a generated key: its lookup hash and its environment', async (t) => {
  const live = generateApiKey('production', TAG);
  t.same(parseApiKey(live.secret), { ok: true, hash: live.hash, environment: 'production' });
  const test = generateApiKey('sandbox', TAG);
  t.same(parseApiKey(test.secret), { ok: true, hash: test.hash, environment: 'sandbox' });
  const parsed = parseApiKey(live.secret);
  t.ok(parsed.ok);
  if (parsed.ok) {
    t.match(parsed.hash, new RegExp(`^${TAG}\\.[A-Za-z0-9_-]{22}$`));
    t.equal(parsed.hash, expectedHash(TAG, live.secret));
  }
});

t.test('hash is the tag and 22 base64url characters of the sha256 of the secret', async (t) => {
  for (let i = 0; i < 20; i++) {
    const key = generateApiKey(i % 2 ? 'production' : 'sandbox', TAG);
    t.equal(key.hash, apiKeyLookupHash(TAG, key.secret));
    t.equal(key.hash, expectedHash(TAG, key.secret));
    t.equal(key.hash.length, 3 + 1 + 22);
    t.notOk(key.hash.includes(key.secret.slice(RANDOM_START)), 'the secret is not in it');
  }
});

t.test('every single-character substitution is rejected', async (t) => {
  const { secret } = generateApiKey('production', TAG);
  const alphabet = BASE62 + '_-.';
  const tagStart = HEAD_LENGTH;
  const tagEnd = HEAD_LENGTH + TAG.length;
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
      // Inside the tag, another tag character keeps the format: only the checksum (which covers
      // the tag) can tell; anything else is not a tag at all.
      if (i >= tagStart && i < tagEnd) {
        const expected = SHARD_TAG_ALPHABET.includes(c) ? 'checksum' : 'malformed';
        if (parsed.reason !== expected) {
          failures++;
          t.fail(`substitution in the tag at ${i} with ${c}: expected ${expected}, got ${parsed.reason}`);
        }
      }
      // Inside the random part or the checksum, with a base62 character, only the checksum can tell.
      if (i >= RANDOM_START && BASE62.includes(c) && parsed.reason !== 'checksum') {
        failures++;
        t.fail(`substitution at ${i} with ${c}: expected checksum, got ${parsed.reason}`);
      }
    }
  }
  t.equal(failures, 0, `all ${tried} substitutions rejected`);
  t.ok(tried > 50 * 60);
});

t.test('truncation, extra characters and wrong prefixes are rejected', async (t) => {
  const { secret } = generateApiKey('sandbox', TAG);
  for (let n = 0; n < secret.length; n++) {
    t.equal(parseApiKey(secret.slice(0, n)).ok, false, `truncated to ${n}`);
  }
  t.same(parseApiKey(secret + 'a'), { ok: false, reason: 'malformed' });
  t.same(parseApiKey('a' + secret), { ok: false, reason: 'malformed' });
  t.same(parseApiKey(secret + ' '), { ok: false, reason: 'malformed' });
  t.same(parseApiKey(' ' + secret), { ok: false, reason: 'malformed' });
  t.same(parseApiKey(secret + '\n'), { ok: false, reason: 'malformed' });
  const rest = secret.slice('agk_test_'.length);
  t.ok(rest.startsWith(`${TAG}_`));
  for (const prefix of ['agk_prod_', 'agk_TEST_', 'AGK_test_', 'agx_test_', 'agk_test', 'agk-test_', 'agktest_', 'agk__test_']) {
    t.same(parseApiKey(prefix + rest), { ok: false, reason: 'malformed' }, prefix);
  }
  // The right format with the other environment's tag: the checksum covers the tag.
  t.same(parseApiKey('agk_live_' + rest), { ok: false, reason: 'checksum' });
  t.same(parseApiKey(''), { ok: false, reason: 'malformed' });
});

t.test('the shard tag segment: exactly 3 characters of the tag alphabet, then an underscore', async (t) => {
  const { secret } = generateApiKey('production', TAG);
  const head = secret.slice(0, HEAD_LENGTH);
  const random = secret.slice(RANDOM_START);
  const otherTag = [...SHARD_TAG_ALPHABET].find((c) => c !== TAG[0])! + TAG.slice(1);
  for (const [what, tag] of [
    ['upper case', TAG.toUpperCase() === TAG ? 'ABC' : TAG.toUpperCase()],
    ['two characters', TAG.slice(0, 2)],
    ['four characters', TAG + '0'],
    ['a letter outside the alphabet (i)', 'i' + TAG.slice(1)],
    ['a letter outside the alphabet (l)', TAG.slice(0, 2) + 'l'],
    ['a letter outside the alphabet (o)', 'o' + TAG.slice(1)],
    ['a letter outside the alphabet (u)', TAG.slice(0, 2) + 'u'],
    ['empty', ''],
  ] as const) {
    t.same(parseApiKey(`${head}${tag}_${random}`), { ok: false, reason: 'malformed' }, what);
  }
  t.same(parseApiKey(`${head}${TAG}${random}`), { ok: false, reason: 'malformed' }, 'no underscore after the tag');
  t.same(parseApiKey(`${head}${TAG}-${random}`), { ok: false, reason: 'malformed' }, 'another separator');
  // Another well-formed tag: the checksum covers the tag, so the key is refused before any lookup.
  t.same(parseApiKey(`${head}${otherTag}_${random}`), { ok: false, reason: 'checksum' });
  // Even with its checksum made right, another tag is another key: another lookup hash, on another shard.
  const body = `${head}${otherTag}_${random.slice(0, 30)}`;
  const forged = parseApiKey(body + crcChecksum(body));
  t.ok(forged.ok, 'a well-formed key with a valid checksum parses');
  if (forged.ok) {
    t.equal(shardTagIn(forged.hash), otherTag);
    t.not(forged.hash, apiKeyLookupHash(TAG, secret));
    t.equal(forged.hash, expectedHash(otherTag, body + crcChecksum(body)));
  }
});

t.test('a key of the first format (agk_live_ + 36 base62, no shard tag) is malformed', async (t) => {
  // A key exactly as the first format made them: 30 random base62 characters and a valid CRC-32 checksum.
  for (const head of ['agk_live_', 'agk_test_']) {
    for (let i = 0; i < 20; i++) {
      let random = '';
      for (let j = 0; j < 30; j++) random += BASE62[Math.floor(Math.random() * 62)];
      const body = head + random;
      const old = body + crcChecksum(body);
      t.equal(old.length, 9 + 36);
      t.match(old, /^agk_(live|test)_[0-9A-Za-z]{36}$/);
      t.same(parseApiKey(old), { ok: false, reason: 'malformed' }, `${old} is not looked up`);
    }
  }
  t.same(parseApiKey(`agk_live_${'A'.repeat(36)}`), { ok: false, reason: 'malformed' });
  t.same(parseApiKey('agk_live_0123456789ABCDEFGHIJabcdefghijABCDEF'), { ok: false, reason: 'malformed' });
  // Built so that its first characters happen to look like a tag: still one underscore short.
  t.same(parseApiKey(`agk_live_${TAG}${'A'.repeat(32)}`), { ok: false, reason: 'malformed' });
});

t.test('displayPrefix is the head, the tag and four random characters, and cannot be parsed', async (t) => {
  for (const [environment, envTag] of [['production', 'live'], ['sandbox', 'test']] as const) {
    const key = generateApiKey(environment, TAG);
    t.equal(key.displayPrefix.length, 17);
    t.equal(key.displayPrefix, key.secret.slice(0, 17));
    t.match(key.displayPrefix, new RegExp(`^agk_${envTag}_${TAG}_[0-9A-Za-z]{4}$`));
    t.same(parseApiKey(key.displayPrefix), { ok: false, reason: 'malformed' });
  }
});

t.test('looksLikeApiKey dispatches on the agk_ prefix only', async (t) => {
  t.ok(looksLikeApiKey(generateApiKey('production', TAG).secret));
  t.ok(looksLikeApiKey('agk_whatever'));
  t.notOk(looksLikeApiKey('eyJhbGciOiJIUzI1NiJ9.e30.sig'));
  t.notOk(looksLikeApiKey('AGK_live_x'));
  t.notOk(looksLikeApiKey(''));
});

t.test('apiKeyShape reads the environment and the tag at their places as the pattern\'s captures say, for keys and near-keys', async (t) => {
  // The reference: the key pattern's captures (what apiKeyShape read before its fifth step).
  const CAPTURES = new RegExp(`^agk_(live|test)_(${SHARD_TAG_SOURCE})_[0-9A-Za-z]{30}[0-9A-Za-z]{6}$`);
  const reference = (token: string) => {
    const match = CAPTURES.exec(token);
    return match === null ? undefined : { hash: expectedHash(match[2]!, token), environment: match[1] === 'live' ? 'production' : 'sandbox' };
  };
  const alphabet = `${BASE62}_-.é`;
  let mismatches = 0;
  let checked = 0;
  for (let n = 0; n < 40; n++) {
    const { secret } = generateApiKey(n % 2 === 0 ? 'production' : 'sandbox', shardTagOf(`org_${n}`));
    const variants = [secret, secret.slice(1), `${secret}x`, `x${secret}`, secret.replace('live', 'LIVE'), secret.replace('test', 'tost')];
    for (let i = 0; i < secret.length; i++) variants.push(secret.slice(0, i) + alphabet[(n * 7 + i) % alphabet.length] + secret.slice(i + 1));
    for (const token of variants) {
      checked++;
      if (JSON.stringify(apiKeyShape(token)) !== JSON.stringify(reference(token))) mismatches++;
    }
  }
  t.ok(checked > 2000);
  t.equal(mismatches, 0);
});
