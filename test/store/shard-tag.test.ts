import t from 'tap';
import { createHash, randomUUID } from 'node:crypto';
import { SHARD_TAG_ALPHABET, SHARD_TAG_LENGTH, SHARD_TAG_SOURCE, shardTagIn, shardTagOf, tagged } from '../../src/store/shard-tag.js';

/** store/shard-tag.ts: where an organization's data lives, derived from its id. */

const WHOLE_TAG = new RegExp(`^${SHARD_TAG_SOURCE}$`);
const randomOrgId = () => `org_${randomUUID().replaceAll('-', '')}`;

t.test('shardTagOf is deterministic: the same text, the same tag', async (t) => {
  for (const text of ['org_1', 'org_0123456789abcdef0123456789abcdef', 'owner@example.test', '', 'é ünïcödé', randomOrgId()]) {
    const tag = shardTagOf(text);
    for (let i = 0; i < 5; i++) t.equal(shardTagOf(text), tag, `${JSON.stringify(text)} → ${tag}`);
  }
  t.not(shardTagOf('org_1'), shardTagOf('org_2'), 'different ids, (here) different tags');
});

t.test('shardTagOf is the first 15 bits of the SHA-256 of the text, five bits a character', async (t) => {
  // Computed independently: a change of the function would move every organization's data.
  for (const text of ['org_1', 'owner@example.test', '', randomOrgId(), randomOrgId()]) {
    const digest = createHash('sha256').update(text, 'utf8').digest();
    const bits = [...digest.subarray(0, 3)].map((byte) => byte.toString(2).padStart(8, '0')).join('').slice(0, 15);
    let expected = '';
    for (let i = 0; i < 15; i += 5) expected += SHARD_TAG_ALPHABET[parseInt(bits.slice(i, i + 5), 2)];
    t.equal(shardTagOf(text), expected, JSON.stringify(text));
  }
});

t.test('a tag is 3 characters of the alphabet and matches SHARD_TAG_SOURCE', async (t) => {
  t.equal(SHARD_TAG_LENGTH, 3);
  for (let i = 0; i < 500; i++) {
    const tag = shardTagOf(randomOrgId());
    if (tag.length !== SHARD_TAG_LENGTH || ![...tag].every((c) => SHARD_TAG_ALPHABET.includes(c)) || !WHOLE_TAG.test(tag)) {
      t.fail(`${tag} is not a tag`);
    }
  }
  t.pass('500 tags checked');
  t.match(shardTagOf('org_1'), WHOLE_TAG);
  t.equal(shardTagOf('org_1').length, SHARD_TAG_LENGTH);
});

t.test('the alphabet and the regular-expression class agree on all 32 characters', async (t) => {
  t.equal(SHARD_TAG_ALPHABET.length, 32);
  t.equal(new Set(SHARD_TAG_ALPHABET).size, 32, 'no character twice');
  t.equal(SHARD_TAG_ALPHABET, [...SHARD_TAG_ALPHABET].sort().join(''), 'in order: digits, then lower-case letters');
  for (const c of SHARD_TAG_ALPHABET) t.ok(WHOLE_TAG.test(c.repeat(SHARD_TAG_LENGTH)), `the class admits ${c}`);
  // Every other character (all of ASCII and some beyond) is refused by both.
  let refused = 0;
  for (let code = 0; code < 0x250; code++) {
    const c = String.fromCharCode(code);
    if (SHARD_TAG_ALPHABET.includes(c)) continue;
    if (WHOLE_TAG.test(c.repeat(SHARD_TAG_LENGTH))) t.fail(`the class admits ${JSON.stringify(c)}, the alphabet does not`);
    else refused++;
  }
  t.equal(refused, 0x250 - 32, 'the class refuses everything else');
  for (const c of ['i', 'l', 'o', 'u']) {
    t.notOk(SHARD_TAG_ALPHABET.includes(c), `${c} is not in the alphabet`);
    t.notOk(WHOLE_TAG.test(c.repeat(SHARD_TAG_LENGTH)), `nor in the class: ${c}`);
    t.notOk(WHOLE_TAG.test(`0${c}0`), `nor among others: ${c}`);
  }
  for (const c of 'ILOUABCZ') t.notOk(WHOLE_TAG.test(c.repeat(SHARD_TAG_LENGTH)), `no upper case: ${c}`);
  t.notOk(WHOLE_TAG.test('ab'), 'two characters are not a tag');
  t.notOk(WHOLE_TAG.test('abcd'), 'four are not either');
});

t.test('tagged and shardTagIn', async (t) => {
  t.equal(tagged('abc', 'xyz'), 'abc.xyz');
  t.equal(shardTagIn('abc.xyz'), 'abc');
  const tag = shardTagOf('org_1');
  t.equal(shardTagIn(tagged(tag, 'AAAAAAAAAAAAAAAAAAAAAA')), tag, 'the tag tagged() put in comes out again');
  t.equal(shardTagIn('abc.'), 'abc', 'whatever follows the dot');
  t.equal(shardTagIn('abc.x.y'), 'abc');
  for (const handle of [
    'abcxyz', // no dot
    'abc',
    '',
    'abi.xyz', // i is not a tag character
    'abl.xyz',
    'abo.xyz',
    'abu.xyz',
    'ABC.xyz', // upper case
    'ab.xyz', // two characters
    'abcd.xyz', // four
    '.abc',
    ' abc.xyz',
    'a-c.xyz',
    'abc_xyz', // an underscore is not the dot
    'sess_1',
    'h1',
    '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', // a hash of the first format
  ]) {
    t.equal(shardTagIn(handle), undefined, JSON.stringify(handle));
  }
});

t.test('1,000 random organization ids spread over at least 950 of the 32,768 tags', async (t) => {
  const tags = new Set<string>();
  const perPosition = Array.from({ length: SHARD_TAG_LENGTH }, () => new Set<string>());
  for (let i = 0; i < 1000; i++) {
    const tag = shardTagOf(randomOrgId());
    tags.add(tag);
    [...tag].forEach((c, position) => perPosition[position]!.add(c));
  }
  // Expected about 985 distinct (32,768 × (1 − e^(−1000/32768))); 950 is far below any likely draw.
  t.ok(tags.size >= 950, `${tags.size} distinct tags`);
  // 1,000 draws of 32 characters miss one with odds about 32 × (31/32)^1000 ≈ 10^-12.
  perPosition.forEach((seen, position) => t.equal(seen.size, 32, `every character appears in position ${position}`));
});
