import Fastify from 'fastify';
import t from 'tap';
import { forwardedInfoOf } from '../../src/proxy/forwarded-info.js';
import { trustProxyOption } from '../../src/request/trust-proxy.js';
import type { ForwardedInfo } from '../../src/proxy/identity-headers.js';

/**
 * forwardedInfoOf computes X-Forwarded-* from the raw request (the fast lane has no fastify
 * request); here it is held against fastify's own request.ips, .protocol and .host for the same
 * AUTHGATE_TRUST_PROXY, over claims honest and forged, as forward.ts used to turn them into headers.
 */
const fromFastify = (ips: string[] | undefined, ip: string, trusted: boolean, protocol: string, host: string, encrypted: boolean): ForwardedInfo => {
  let chain: string;
  if (trusted) {
    const list = ips ?? [];
    chain = list[list.length - 1] ?? 'unknown';
    for (let i = list.length - 2; i >= 0; i--) chain += `, ${list[i] ?? 'unknown'}`;
  } else {
    chain = ip;
  }
  const proto = protocol === 'https' || protocol === 'http' ? protocol : encrypted ? 'https' : 'http';
  return { for: chain, proto, host: host === '' ? undefined : host };
};

const CLAIMS: Record<string, string>[] = [
  {},
  { 'x-forwarded-for': '203.0.113.7' },
  { 'x-forwarded-for': '203.0.113.7, 198.51.100.2', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'api.example.test' },
  { 'x-forwarded-for': '10.0.0.1, 203.0.113.7, 127.0.0.1', 'x-forwarded-proto': 'http, https' },
  { 'x-forwarded-proto': 'gopher', 'x-forwarded-host': 'a.test, b.test' },
  { 'x-forwarded-for': 'not an address, 203.0.113.7' },
  { 'x-forwarded-host': '' },
];

for (const setting of [false, true, 1, 2, '127.0.0.1', '127.0.0.1/8, 10.0.0.0/8', '192.0.2.1'] as const) {
  t.test(`AUTHGATE_TRUST_PROXY=${String(setting)}: the same as fastify's`, async (t) => {
    const trust = trustProxyOption(setting);
    const ours = forwardedInfoOf(trust);
    const app = Fastify({ trustProxy: trust });
    app.get('/', async (request) => ({
      ours: ours(request.raw),
      theirs: fromFastify(request.ips, request.ip, trust !== false, request.protocol, request.host, false),
    }));
    t.teardown(() => app.close());
    for (const claims of CLAIMS) {
      const answer = await app.inject({ method: 'GET', url: '/', headers: { host: 'gateway.test', ...claims } });
      const { ours: mine, theirs } = answer.json() as { ours: ForwardedInfo; theirs: ForwardedInfo };
      t.same(mine, theirs, JSON.stringify(claims));
    }
  });
}

t.test('without trust, every claim is ignored', async (t) => {
  const app = Fastify();
  app.get('/', async (request) => forwardedInfoOf(false)(request.raw));
  t.teardown(() => app.close());
  const answer = await app.inject({ method: 'GET', url: '/', headers: { host: 'gateway.test', 'x-forwarded-for': '203.0.113.7', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.test' } });
  t.same(answer.json(), { for: '127.0.0.1', proto: 'http', host: 'gateway.test' });
});
