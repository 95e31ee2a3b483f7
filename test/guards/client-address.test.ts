import t from 'tap';
import fc from 'fast-check';
import { isIP } from 'node:net';
import { throttleAddress } from '../../src/guards/client-address.js';

t.test('IPv4 as it is', async (t) => {
  for (const ip of ['203.0.113.7', '127.0.0.1', '0.0.0.0', '255.255.255.255']) t.equal(throttleAddress(ip), ip);
});

t.test('IPv6 folded to its /64, whatever the spelling', async (t) => {
  const table: Array<[string, string]> = [
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['2001:0DB8:0001:0002:0000:0000:0000:0001', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:0:0:0:1', '2001:db8:1:2::/64'],
    ['2001:db8:1:3::1', '2001:db8:1:3::/64'],
    ['2001:db8::', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['::', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['fe80::1', 'fe80:0:0:0::/64'],
    ['64:ff9b::192.0.2.33', '64:ff9b:0:0::/64'],
    ['1:2:3:4:5:6:7::', '1:2:3:4::/64'],
    ['::2:3:4:5:6:7:8', '0:2:3:4::/64'],
  ];
  for (const [ip, expected] of table) t.equal(throttleAddress(ip), expected, ip);
  t.equal(throttleAddress('2001:db8:1:2::1'), throttleAddress('2001:db8:1:2:abcd::7'), 'one /64, one counter');
  t.not(throttleAddress('2001:db8:1:2::1'), throttleAddress('2001:db8:1:3::1'), 'the next /64 is another');
});

t.test('IPv4-mapped IPv6 is its IPv4 address', async (t) => {
  t.equal(throttleAddress('::ffff:203.0.113.7'), '203.0.113.7');
  t.equal(throttleAddress('::FFFF:203.0.113.7'), '203.0.113.7');
  t.equal(throttleAddress('::ffff:cb00:7107'), '203.0.113.7', 'hex spelling');
  t.equal(throttleAddress('0:0:0:0:0:ffff:127.0.0.1'), '127.0.0.1');
  t.equal(throttleAddress('::ffff:0:0'), '0.0.0.0');
  t.equal(throttleAddress('::ffff:1:203.0.113.7'), '0:0:0:0::/64', 'not mapped: a different prefix');
});

t.test('anything else is a short hash of its text', async (t) => {
  const junk = ['', 'unknown', 'not-an-address', '203.0.113.7.1', '2001:db8:::1', 'x'.repeat(10_000), '1.2.3.4, 5.6.7.8'];
  const seen = new Set<string>();
  for (const text of junk) {
    const folded = throttleAddress(text);
    t.match(folded, /^other:[A-Za-z0-9_-]{16}$/, JSON.stringify(text.slice(0, 40)));
    seen.add(folded);
  }
  t.equal(seen.size, junk.length, 'different texts, different counters');
  t.equal(throttleAddress('unknown'), throttleAddress('unknown'));
  t.equal(throttleAddress(undefined), 'other:none', 'a socket already gone');
});

/** The eight groups spelled as a client, a proxy or a dual-stack listener may spell them. */
const SPELLINGS: Array<[string, (groups: number[]) => string]> = [
  ['full, leading zeros, upper case', (groups) => groups.map((group) => group.toString(16).padStart(4, '0').toUpperCase()).join(':')],
  ['full, no leading zeros', (groups) => groups.map((group) => group.toString(16)).join(':')],
  ['compressed (WHATWG URL serialization)', (groups) => new URL(`http://[${groups.map((group) => group.toString(16)).join(':')}]/`).hostname.slice(1, -1)],
  ['with a zone id', (groups) => `${new URL(`http://[${groups.map((group) => group.toString(16)).join(':')}]/`).hostname.slice(1, -1)}%eth0`],
  ['with a dotted IPv4 tail', (groups) => `${groups.slice(0, 6).map((group) => group.toString(16)).join(':')}:${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`],
];

/** What the groups must fold to, computed from the groups themselves, not from a parse. */
function expectedOf(groups: number[]): string {
  const mapped = groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff;
  if (mapped) return `${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`;
  return `${groups.slice(0, 4).map((group) => group.toString(16)).join(':')}::/64`;
}

t.test('every spelling of an IPv6 address folds as its groups say (property)', async (t) => {
  const group = fc.oneof(fc.constant(0), fc.constant(0xffff), fc.integer({ min: 0, max: 0xffff }));
  // Runs of zeros (compressed as ::) and the IPv4-mapped prefix come up often, not by luck.
  const groups = fc.oneof(
    fc.array(group, { minLength: 8, maxLength: 8 }),
    fc.tuple(fc.integer({ min: 0, max: 7 }), fc.array(group, { minLength: 8, maxLength: 8 })).map(([zeros, rest]) => [...Array<number>(zeros).fill(0), ...rest].slice(0, 8)),
    fc.array(group, { minLength: 2, maxLength: 2 }).map((tail) => [0, 0, 0, 0, 0, 0xffff, ...tail]),
  );
  fc.assert(
    fc.property(groups, fc.integer({ min: 0, max: SPELLINGS.length - 1 }), (parts, which) => {
      const [name, spell] = SPELLINGS[which]!;
      const text = spell(parts);
      const folded = throttleAddress(text);
      if (folded !== expectedOf(parts)) throw new Error(`${text} (${name}) folded to ${folded}, not ${expectedOf(parts)}`);
    }),
    { numRuns: 5000 },
  );
  t.pass('5000 addresses');
});

t.test('any text that is no address is hashed, never thrown on (property)', async (t) => {
  const near = fc.stringMatching(/^[0-9a-fA-F:.%]{0,48}$/);
  fc.assert(
    fc.property(fc.oneof(near, fc.string({ maxLength: 64 })), (text) => {
      const zoneless = text.split('%', 1)[0]!;
      if (isIP(text) === 4 || isIP(zoneless) === 6) return;
      const folded = throttleAddress(text);
      if (!/^other:[A-Za-z0-9_-]{16}$/.test(folded)) throw new Error(`${JSON.stringify(text)} folded to ${folded}`);
    }),
    { numRuns: 5000 },
  );
  t.pass('5000 texts');
});
