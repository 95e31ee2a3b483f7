import t from 'tap';
import { trustProxyOption } from '../../src/request/trust-proxy.js';

t.test('AUTHGATE_TRUST_PROXY as fastify\'s trustProxy', async (t) => {
  t.equal(trustProxyOption(false), false);
  t.equal(trustProxyOption(true), true);
  t.equal(trustProxyOption('10.0.0.0/8, 127.0.0.1'), '10.0.0.0/8, 127.0.0.1', 'address lists as they are');
  t.equal(trustProxyOption(0), false, 'a count of 0 trusts nothing');
  const two = trustProxyOption(2);
  t.type(two, 'function', 'a count is a function: fastify itself would trust nothing for a number');
  if (typeof two !== 'function') return;
  t.same([0, 1, 2, 3].map((hop) => two('203.0.113.9', hop)), [true, true, false, false], 'the nearest two hops, whatever their address');
});
