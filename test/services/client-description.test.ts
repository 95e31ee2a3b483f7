import t from 'tap';
import { addressPrefix, describeClient, userAgentFamily } from '../../src/services/client-description.js';

/** services/client-description.ts: a session's client, coarse: a user-agent family and a network. */

t.test('user agent families: browsers by their own token, other clients by their product', async (t) => {
  const cases: Array<[string | undefined, string]> = [
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 Edg/120.0.2210.91', 'Edge'],
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 OPR/106.0.0.0', 'Opera'],
    ['Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0', 'Firefox'],
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36', 'Headless Chrome'],
    ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36', 'Chrome'],
    ['Mozilla/5.0 (Macintosh; Intel Mac OS X 14_2) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Safari/605.1.15', 'Safari'],
    ['curl/8.5.0', 'curl'],
    ['python-requests/2.31.0', 'python-requests'],
    ['Go-http-client/1.1', 'Go-http-client'],
    ['  ', 'unknown client'],
    [undefined, 'unknown client'],
    ['<script>alert(1)</script>', 'unknown client'],
    [`x${'y'.repeat(100)}/1`, `x${'y'.repeat(39)}`],
  ];
  for (const [ua, family] of cases) t.equal(userAgentFamily(ua), family, String(ua).slice(0, 40));
});

t.test('address networks: IPv4 /24, IPv6 /48, IPv4-mapped as IPv4; nothing that is not an address', async (t) => {
  t.equal(addressPrefix('203.0.113.77'), '203.0.113.0/24');
  t.equal(addressPrefix('::ffff:198.51.100.9'), '198.51.100.0/24');
  t.equal(addressPrefix('2001:db8:1234:5678::1'), '2001:db8:1234::/48');
  t.equal(addressPrefix('2001:db8::1'), '2001:db8:0::/48');
  t.equal(addressPrefix('::1'), '0:0:0::/48');
  t.equal(addressPrefix('not-an-ip'), 'an unknown address');
  t.equal(addressPrefix(undefined), 'an unknown address');
  t.equal(describeClient('curl/8.5.0', '203.0.113.77'), 'curl from 203.0.113.0/24', 'never the whole address');
  t.ok(describeClient('x'.repeat(500), '2001:db8::1').length <= 100);
});
