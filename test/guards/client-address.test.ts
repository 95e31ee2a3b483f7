import t from 'tap';
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
