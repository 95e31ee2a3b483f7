import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { trustedPeers } from '../../src/edge-authz/peers.js';
import { testConfig } from '../helpers/gateway.js';

t.test('trusted peers: loopback by default, addresses and CIDRs, IPv4-mapped peers as their IPv4', async (t) => {
  const config = testConfig();
  t.same(config.authz, { port: undefined, host: '0.0.0.0', trustedProxies: ['loopback'], cacheSeconds: 0 }, 'off unless a port is set');
  const loopback = trustedPeers(config.authz.trustedProxies);
  for (const address of ['127.0.0.1', '127.3.4.5', '::1', '::ffff:127.0.0.1']) t.ok(loopback(address), `${address} is trusted`);
  for (const address of ['10.0.0.1', '192.0.2.1', '::ffff:10.0.0.1', '', undefined]) t.notOk(loopback(address), `${String(address)} is not`);
  const listed = trustedPeers(testConfig({ AUTHGATE_AUTHZ_TRUSTED_PROXIES: '10.1.0.0/16, 192.0.2.7,fd00::/8' }).authz.trustedProxies);
  for (const address of ['10.1.200.3', '192.0.2.7', 'fd00::5', '::ffff:10.1.0.9']) t.ok(listed(address), `${address} is trusted`);
  for (const address of ['10.2.0.1', '192.0.2.8', '127.0.0.1']) t.notOk(listed(address), `${address} is not`);
});

t.test('the authorization port\'s settings are checked', async (t) => {
  const base = { AUTHGATE_JWT_SECRET: 'x'.repeat(40), AUTHGATE_ADMIN_TOKEN: 'y'.repeat(20) };
  const errors = (env: Record<string, string>) => {
    const loaded = loadConfig({ ...base, ...env });
    return loaded.ok ? [] : loaded.errors;
  };
  t.match(errors({ AUTHGATE_AUTHZ_TRUSTED_PROXIES: '10.0.0.0/8,example.com' }), [/^AUTHGATE_AUTHZ_TRUSTED_PROXIES must be comma-separated addresses/]);
  t.match(errors({ AUTHGATE_AUTHZ_TRUSTED_PROXIES: '10.0.0.0/33' }), [/^AUTHGATE_AUTHZ_TRUSTED_PROXIES /]);
  t.match(errors({ AUTHGATE_AUTHZ_CACHE_SECONDS: '6' }), [/^AUTHGATE_AUTHZ_CACHE_SECONDS must be a whole number from 0 to 5/]);
  t.match(errors({ AUTHGATE_AUTHZ_PORT: '8080' }), [/^AUTHGATE_AUTHZ_PORT must differ from AUTHGATE_PORT/]);
  t.match(errors({ AUTHGATE_AUTHZ_PORT: '9090' }), [/^AUTHGATE_AUTHZ_PORT must differ/]);
  t.same(errors({ AUTHGATE_AUTHZ_PORT: '9191', AUTHGATE_AUTHZ_HOST: '127.0.0.1', AUTHGATE_AUTHZ_TRUSTED_PROXIES: 'loopback,uniquelocal', AUTHGATE_AUTHZ_CACHE_SECONDS: '5' }), []);
});
