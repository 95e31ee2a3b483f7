import t from 'tap';
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type Env, type LoadResult } from '../../src/config/load.js';
import type { Config } from '../../src/config/config.js';
import { identityKeyFile, pemBegin } from '../helpers/identity-key.js';
import { makeCertificate } from '../helpers/tls.js';

const SECRET = 'a-jwt-secret-of-at-least-32-bytes-0123456789';
const ADMIN = 'admin-token-0123456789';
const PRODUCTION: Env = {
  NODE_ENV: 'production',
  AUTHGATE_JWT_SECRET: SECRET,
  AUTHGATE_ADMIN_TOKEN: ADMIN,
  AUTHGATE_UPSTREAM_URL: 'http://upstream.internal:8000',
  AUTHGATE_REDIS_URL: 'redis://redis.internal:6379',
  AUTHGATE_IDENTITY_KEY_FILE: identityKeyFile(),
};

/** Just what the two helpers below use of a tap test. */
type Asserts = Pick<typeof t, 'fail' | 'notOk'>;

function ok(t: Asserts, result: LoadResult): Config {
  if (!result.ok) {
    t.fail(`expected a config, got errors: ${result.errors.join(' | ')}`);
    throw new Error('config did not load');
  }
  return result.config;
}

function errorsOf(t: Asserts, result: LoadResult): string[] {
  if (result.ok) {
    t.fail('expected errors, got a config');
    return [];
  }
  for (const error of result.errors) t.notOk(error.includes('\n'), `one line: ${error}`);
  return result.errors;
}

/** The setting names that errors start with. */
const names = (errors: string[]) => errors.map((e) => e.split(' ')[0]);

t.test('an empty environment is development with safe defaults', async (t) => {
  const config = ok(t, loadConfig({}));
  t.equal(config.production, false);
  t.equal(config.environment, 'sandbox');
  t.same(config.store, { kind: 'memory' });
  t.same(config.publicListener, { host: '0.0.0.0', port: 8080 });
  t.same(config.opsListener, { host: '0.0.0.0', port: 9090 });
  t.equal(config.jwt.generated, true);
  t.ok(Buffer.byteLength(config.jwt.secret) >= 32, 'a generated secret long enough');
  t.same(config.jwt.previousSecrets, []);
  t.equal(config.jwt.issuer, 'authgate');
  t.equal(config.jwt.ttlSeconds, 3600);
  t.equal(config.admin.generated, true);
  t.ok(config.admin.token.length >= 16);
  t.equal(config.upstream.url, undefined);
  t.equal(config.upstream.timeoutMs, 10_000);
  t.same(config.cache, { max: 100_000, ttlSeconds: 60, negativeTtlSeconds: 5, negativeMax: 65_536 });
  t.equal(config.trustProxy, false);
  t.same(config.shutdown, { delaySeconds: 0, graceSeconds: 25 });
  t.equal(config.log.level, 'info');
  // A generated secret is not a constant.
  const again = ok(t, loadConfig({}));
  t.not(again.jwt.secret, config.jwt.secret);
  t.not(again.admin.token, config.admin.token);
});

t.test('production with nothing set names each missing setting, one line each', async (t) => {
  const errors = errorsOf(t, loadConfig({ NODE_ENV: 'production' }));
  t.same(names(errors).sort(), ['AUTHGATE_ADMIN_TOKEN', 'AUTHGATE_IDENTITY_KEY_FILE', 'AUTHGATE_JWT_SECRET', 'AUTHGATE_STORE', 'AUTHGATE_UPSTREAM_URL']);
});

t.test('a complete production environment loads', async (t) => {
  const config = ok(t, loadConfig(PRODUCTION));
  t.equal(config.production, true);
  t.equal(config.environment, 'production');
  t.equal(config.jwt.secret, SECRET);
  t.equal(config.jwt.generated, false);
  t.equal(config.admin.token, ADMIN);
  t.equal(config.admin.generated, false);
  t.equal(config.upstream.url, 'http://upstream.internal:8000');
  t.same(config.store, { kind: 'redis', url: 'redis://redis.internal:6379', prefix: 'authgate:', commandTimeoutMs: 500, waitReplicas: 0 });
  t.equal(config.shutdown.delaySeconds, 5);
});

t.test('AUTHGATE_STORE=memory is accepted in production when said on purpose', async (t) => {
  const { AUTHGATE_REDIS_URL: _, ...noRedis } = PRODUCTION;
  const config = ok(t, loadConfig({ ...noRedis, AUTHGATE_STORE: 'memory' }));
  t.same(config.store, { kind: 'memory' });
  t.same(names(errorsOf(t, loadConfig(noRedis))), ['AUTHGATE_STORE']);
  t.same(names(errorsOf(t, loadConfig({ ...noRedis, AUTHGATE_STORE: 'postgres' }))), ['AUTHGATE_STORE']);
});

t.test('secrets are never echoed in errors', async (t) => {
  const short = 'short-jwt-secret-zzz';
  const errors = errorsOf(t, loadConfig({ ...PRODUCTION, AUTHGATE_JWT_SECRET: short }));
  t.same(names(errors), ['AUTHGATE_JWT_SECRET']);
  for (const e of errors) t.notOk(e.includes(short), 'no secret value in the error');

  const shortPrevious = 'old-secret-yyy';
  const previous = errorsOf(t, loadConfig({ ...PRODUCTION, AUTHGATE_JWT_PREVIOUS_SECRETS: `${SECRET}x,${shortPrevious}` }));
  t.same(names(previous), ['AUTHGATE_JWT_PREVIOUS_SECRETS']);
  for (const e of previous) t.notOk(e.includes(shortPrevious) || e.includes(SECRET));

  const shortAdmin = 'adm-qqq';
  const admin = errorsOf(t, loadConfig({ ...PRODUCTION, AUTHGATE_ADMIN_TOKEN: shortAdmin }));
  t.same(names(admin), ['AUTHGATE_ADMIN_TOKEN']);
  for (const e of admin) t.notOk(e.includes(shortAdmin));

  const badRedis = 'http://user:hunter2-redis-pass@redis.internal:6379';
  const redis = errorsOf(t, loadConfig({ ...PRODUCTION, AUTHGATE_REDIS_URL: badRedis }));
  t.same(names(redis), ['AUTHGATE_REDIS_URL']);
  for (const e of redis) t.notOk(e.includes('hunter2'));
});

t.test('AUTHGATE_CORS_ORIGINS: none by default, exact origins (normalized), or `*` alone', async (t) => {
  t.same(ok(t, loadConfig({})).cors, { origins: [] }, 'none by default');
  t.same(ok(t, loadConfig({ AUTHGATE_CORS_ORIGINS: '' })).cors, { origins: [] }, 'empty: none');
  t.same(ok(t, loadConfig({ ...PRODUCTION })).cors, { origins: [] }, 'none in production either');

  const listed = ok(t, loadConfig({ AUTHGATE_CORS_ORIGINS: ' https://app.example.com , HTTPS://Admin.Example.COM:443,http://localhost:5173,https://[::1]:8443,' }));
  t.same(listed.cors.origins, ['https://app.example.com', 'https://admin.example.com', 'http://localhost:5173', 'https://[::1]:8443'], 'trimmed, as browsers send them: lower case, default port dropped');
  t.ok(Object.isFrozen(listed.cors.origins), 'frozen');

  t.equal(ok(t, loadConfig({ AUTHGATE_CORS_ORIGINS: '*' })).cors.origins, '*', '`*`: any origin');
  t.equal(ok(t, loadConfig({ AUTHGATE_CORS_ORIGINS: ' * ' })).cors.origins, '*', 'trimmed');
  t.equal(ok(t, loadConfig({ ...PRODUCTION, AUTHGATE_CORS_ORIGINS: '*' })).cors.origins, '*', 'allowed in production: no credentials are ever allowed with it');

  for (const value of ['*,https://app.example.com', 'https://app.example.com, *', '*,*']) {
    const errors = errorsOf(t, loadConfig({ AUTHGATE_CORS_ORIGINS: value }));
    t.same(names(errors), ['AUTHGATE_CORS_ORIGINS'], `${value}: \`*\` with others is refused`);
    t.match(errors[0], /`\*` alone/);
  }
});

t.test('AUTHGATE_CORS_ORIGINS refuses what is not an origin, never echoing it', async (t) => {
  const refused = [
    'https://zq7-app.test/',
    'https://zq7-app.test/path',
    'https://zq7-app.test?x=1',
    'https://zq7-app.test#top',
    'https://user:pw@zq7-app.test',
    'zq7-app.test',
    '//zq7-app.test',
    'ftp://files.example.com',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'null',
    'https://',
    'https://exa mple.com',
    'https://zq7-app.test:99999',
    'not-an-origin-zzqq',
  ];
  const message = 'AUTHGATE_CORS_ORIGINS must each be an origin such as https://app.example.com (scheme and host, no path)';
  for (const value of refused) {
    const errors = errorsOf(t, loadConfig({ AUTHGATE_CORS_ORIGINS: `https://ok.example.com,${value}` }));
    t.same(names(errors), ['AUTHGATE_CORS_ORIGINS'], `${value}: refused`);
    // The one fixed sentence: neither the refused entry nor the valid ones.
    t.same(errors, [message], `${value}: not echoed`);
  }
  const many = errorsOf(t, loadConfig({ AUTHGATE_CORS_ORIGINS: 'garbage-one,garbage-two' }));
  t.ok(many.length >= 1 && many.every((e) => e.startsWith('AUTHGATE_CORS_ORIGINS ')), 'each error names the setting');
  t.notOk(many.join(' ').includes('garbage'), 'never echoed');
});

t.test('a 32-byte secret is enough, 31 is not', async (t) => {
  ok(t, loadConfig({ AUTHGATE_JWT_SECRET: 'x'.repeat(32) }));
  t.same(names(errorsOf(t, loadConfig({ AUTHGATE_JWT_SECRET: 'x'.repeat(31) }))), ['AUTHGATE_JWT_SECRET']);
});

t.test('previous secrets are a trimmed comma-separated list', async (t) => {
  const a = 'a'.repeat(32);
  const b = 'b'.repeat(40);
  const config = ok(t, loadConfig({ AUTHGATE_JWT_PREVIOUS_SECRETS: ` ${a} , ${b},` }));
  t.same(config.jwt.previousSecrets, [a, b]);
});

t.test('AUTHGATE_ENVIRONMENT is production or sandbox', async (t) => {
  t.same(names(errorsOf(t, loadConfig({ AUTHGATE_ENVIRONMENT: 'staging' }))), ['AUTHGATE_ENVIRONMENT']);
  t.same(names(errorsOf(t, loadConfig({ AUTHGATE_ENVIRONMENT: 'Production' }))), ['AUTHGATE_ENVIRONMENT']);
  t.equal(ok(t, loadConfig({ AUTHGATE_ENVIRONMENT: 'production' })).environment, 'production');
  t.equal(ok(t, loadConfig({ ...PRODUCTION, AUTHGATE_ENVIRONMENT: 'sandbox' })).environment, 'sandbox');
});

t.test('ports and integers are checked', async (t) => {
  for (const port of ['abc', '70000', '-1', '80.5', '8080x', '0x50', '65536']) {
    t.same(names(errorsOf(t, loadConfig({ AUTHGATE_PORT: port }))), ['AUTHGATE_PORT'], `port ${port}`);
  }
  t.equal(ok(t, loadConfig({ AUTHGATE_PORT: ' 8443 ' })).publicListener.port, 8443);
  t.equal(ok(t, loadConfig({ AUTHGATE_PORT: '65535' })).publicListener.port, 65535);
  t.same(names(errorsOf(t, loadConfig({ AUTHGATE_OPS_PORT: '8080' }))), ['AUTHGATE_OPS_PORT'], 'ops port may not equal the public port');
  t.same(names(errorsOf(t, loadConfig({ AUTHGATE_CACHE_MAX: '1e3' }))), ['AUTHGATE_CACHE_MAX']);
  t.same(names(errorsOf(t, loadConfig({ AUTHGATE_TOKEN_TTL_SECONDS: '0' }))), ['AUTHGATE_TOKEN_TTL_SECONDS']);
  t.same(names(errorsOf(t, loadConfig({ AUTHGATE_TOKEN_TTL_SECONDS: '1.5' }))), ['AUTHGATE_TOKEN_TTL_SECONDS']);
  t.same(names(errorsOf(t, loadConfig({ AUTHGATE_TOKEN_TTL_SECONDS: '86401' }))), ['AUTHGATE_TOKEN_TTL_SECONDS']);
  t.same(names(errorsOf(t, loadConfig({ AUTHGATE_UPSTREAM_TIMEOUT_MS: '0' }))), ['AUTHGATE_UPSTREAM_TIMEOUT_MS']);
  t.same(names(errorsOf(t, loadConfig({ AUTHGATE_NEGATIVE_CACHE_TTL_SECONDS: 'five' }))), ['AUTHGATE_NEGATIVE_CACHE_TTL_SECONDS']);
  t.same(names(errorsOf(t, loadConfig({ AUTHGATE_CACHE_TTL_SECONDS: '99999999999999999999' }))), ['AUTHGATE_CACHE_TTL_SECONDS']);
  t.equal(ok(t, loadConfig({ AUTHGATE_TOKEN_TTL_SECONDS: '60' })).jwt.ttlSeconds, 60);
  t.equal(ok(t, loadConfig({ AUTHGATE_TOKEN_TTL_SECONDS: '1' })).jwt.ttlSeconds, 1, 'lifetimes of seconds, for testing expiry');
  t.equal(ok(t, loadConfig({ AUTHGATE_TOKEN_TTL_SECONDS: '86400' })).jwt.ttlSeconds, 86_400);
  t.equal(ok(t, loadConfig({ AUTHGATE_CACHE_MAX: '0' })).cache.max, 0);
});

t.test('every bad setting is reported at once', async (t) => {
  const errors = errorsOf(t, loadConfig({ AUTHGATE_PORT: 'x', AUTHGATE_ENVIRONMENT: 'qa', LOG_LEVEL: 'loud', AUTHGATE_UPSTREAM_URL: 'ftp://x' }));
  t.same(names(errors).sort(), ['AUTHGATE_ENVIRONMENT', 'AUTHGATE_PORT', 'AUTHGATE_UPSTREAM_URL', 'LOG_LEVEL']);
});

t.test('redis settings', async (t) => {
  t.test('a URL without a scheme', async (t) => {
    t.same(names(errorsOf(t, loadConfig({ AUTHGATE_REDIS_URL: 'redis.internal:6379' }))), ['AUTHGATE_REDIS_URL']);
    const tls = ok(t, loadConfig({ AUTHGATE_REDIS_URL: 'rediss://r:6380' }));
    t.same(tls.store, { kind: 'redis', url: 'rediss://r:6380', tls: {}, prefix: 'authgate:', commandTimeoutMs: 500, waitReplicas: 0 }, 'rediss:// is TLS on');
  });

  t.test('two topologies at once', async (t) => {
    t.same(names(errorsOf(t, loadConfig({ AUTHGATE_REDIS_URL: 'redis://r:6379', AUTHGATE_REDIS_SENTINELS: 's1:26379' }))), ['AUTHGATE_STORE']);
    t.same(names(errorsOf(t, loadConfig({ AUTHGATE_REDIS_SENTINELS: 's1:26379', AUTHGATE_REDIS_CLUSTER_NODES: 'c1:7000' }))), ['AUTHGATE_STORE']);
    t.same(names(errorsOf(t, loadConfig({ AUTHGATE_STORE: 'redis' }))), ['AUTHGATE_STORE'], 'redis with no topology');
  });

  t.test('sentinels as a host:port list', async (t) => {
    const config = ok(t, loadConfig({ AUTHGATE_REDIS_SENTINELS: 's1.internal:26379, s2.internal:26380 ,[::1]:26381', AUTHGATE_REDIS_PASSWORD: 'pw' }));
    t.same(config.store, {
      kind: 'redis',
      sentinels: [
        { host: 's1.internal', port: 26379 },
        { host: 's2.internal', port: 26380 },
        { host: '::1', port: 26381 },
      ],
      sentinelName: 'mymaster',
      password: 'pw',
      prefix: 'authgate:',
      commandTimeoutMs: 500,
      waitReplicas: 0,
    });
    const named = ok(t, loadConfig({ AUTHGATE_REDIS_SENTINELS: 's1:1', AUTHGATE_REDIS_SENTINEL_NAME: 'primary' }));
    t.equal(named.store.kind === 'redis' && named.store.sentinelName, 'primary');
    for (const bad of ['s1', 's1:', 's1:0', 's1:65536', ':26379', 's1:26379,', 's1:26379;s2:26379', 'redis://s1:26379']) {
      t.same(names(errorsOf(t, loadConfig({ AUTHGATE_REDIS_SENTINELS: bad }))), ['AUTHGATE_REDIS_SENTINELS'], bad);
    }
  });

  t.test('TLS and the Sentinels\' own credentials', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'authgate-load-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    // A real certificate: the CA file is parsed at load (config/pem.ts), not only looked at.
    const caFile = makeCertificate(dir, 'ca').certFile;
    const pem = readFileSync(caFile, 'utf8');
    const notPem = join(dir, 'not.pem');
    writeFileSync(notPem, 'hello');
    const sentinels = { AUTHGATE_REDIS_SENTINELS: 's1:26379' };

    const config = ok(t, loadConfig({
      ...sentinels,
      AUTHGATE_REDIS_TLS: 'on',
      AUTHGATE_REDIS_TLS_CA_FILE: caFile,
      AUTHGATE_REDIS_TLS_SERVER_NAME: 'redis.internal',
      AUTHGATE_REDIS_SENTINEL_USERNAME: 'watcher',
      AUTHGATE_REDIS_SENTINEL_PASSWORD: 'sentinel-secret',
    }));
    t.same(config.store, {
      kind: 'redis',
      sentinels: [{ host: 's1', port: 26379 }],
      sentinelName: 'mymaster',
      sentinelUsername: 'watcher',
      sentinelPassword: 'sentinel-secret',
      tls: { ca: pem, serverName: 'redis.internal' },
      prefix: 'authgate:',
      commandTimeoutMs: 500,
      waitReplicas: 0,
    }, 'the CA is read at start');
    const cluster = ok(t, loadConfig({ AUTHGATE_REDIS_CLUSTER_NODES: 'c1:7000', AUTHGATE_REDIS_TLS: 'on' }));
    t.same(cluster.store.kind === 'redis' && cluster.store.tls, {}, 'Cluster over TLS with the built-in CAs');
    const off = ok(t, loadConfig({ AUTHGATE_REDIS_CLUSTER_NODES: 'c1:7000', AUTHGATE_REDIS_TLS: 'off' }));
    t.equal(off.store.kind === 'redis' && off.store.tls, undefined, 'off is off');
    const standalone = ok(t, loadConfig({ AUTHGATE_REDIS_URL: 'rediss://r:6380', AUTHGATE_REDIS_TLS: 'on', AUTHGATE_REDIS_TLS_CA_FILE: caFile }));
    t.same(standalone.store.kind === 'redis' && standalone.store.tls, { ca: pem }, 'a CA for rediss:// too');

    const refused: [Env, string][] = [
      [{ ...sentinels, AUTHGATE_REDIS_TLS: 'yes' }, 'AUTHGATE_REDIS_TLS'],
      [{ AUTHGATE_REDIS_URL: 'redis://r:6379', AUTHGATE_REDIS_TLS: 'on' }, 'AUTHGATE_REDIS_TLS'],
      [{ AUTHGATE_REDIS_URL: 'rediss://r:6380', AUTHGATE_REDIS_TLS: 'off' }, 'AUTHGATE_REDIS_TLS'],
      [{ ...sentinels, AUTHGATE_REDIS_TLS_CA_FILE: caFile }, 'AUTHGATE_REDIS_TLS_CA_FILE'],
      [{ AUTHGATE_REDIS_URL: 'redis://r:6379', AUTHGATE_REDIS_TLS_CA_FILE: caFile }, 'AUTHGATE_REDIS_TLS_CA_FILE'],
      [{ ...sentinels, AUTHGATE_REDIS_TLS: 'off', AUTHGATE_REDIS_TLS_SERVER_NAME: 'redis.internal' }, 'AUTHGATE_REDIS_TLS_SERVER_NAME'],
      [{ ...sentinels, AUTHGATE_REDIS_TLS: 'on', AUTHGATE_REDIS_TLS_CA_FILE: join(dir, 'missing.pem') }, 'AUTHGATE_REDIS_TLS_CA_FILE'],
      [{ ...sentinels, AUTHGATE_REDIS_TLS: 'on', AUTHGATE_REDIS_TLS_CA_FILE: notPem }, 'AUTHGATE_REDIS_TLS_CA_FILE'],
      [{ ...sentinels, AUTHGATE_REDIS_TLS: 'on', AUTHGATE_REDIS_TLS_SERVER_NAME: '127.0.0.1' }, 'AUTHGATE_REDIS_TLS_SERVER_NAME'],
      [{ ...sentinels, AUTHGATE_REDIS_TLS: 'on', AUTHGATE_REDIS_TLS_SERVER_NAME: 'redis internal' }, 'AUTHGATE_REDIS_TLS_SERVER_NAME'],
      [{ AUTHGATE_REDIS_URL: 'redis://r:6379', AUTHGATE_REDIS_SENTINEL_PASSWORD: 'sentinel-secret' }, 'AUTHGATE_REDIS_SENTINEL_PASSWORD'],
      [{ AUTHGATE_REDIS_CLUSTER_NODES: 'c1:7000', AUTHGATE_REDIS_SENTINEL_USERNAME: 'watcher', AUTHGATE_REDIS_SENTINEL_PASSWORD: 'sentinel-secret' }, 'AUTHGATE_REDIS_SENTINEL_USERNAME'],
      [{ ...sentinels, AUTHGATE_REDIS_SENTINEL_USERNAME: 'watcher' }, 'AUTHGATE_REDIS_SENTINEL_USERNAME'],
    ];
    for (const [env, setting] of refused) {
      const errors = errorsOf(t, loadConfig(env));
      t.equal(names(errors)[0], setting, errors.join(' | '));
      t.notOk(errors.join(' ').includes('sentinel-secret'), 'never the secret');
    }
    t.same(names(errorsOf(t, loadConfig({ AUTHGATE_REDIS_CLUSTER_NODES: 'c1:7000', AUTHGATE_REDIS_SENTINEL_USERNAME: 'watcher', AUTHGATE_REDIS_SENTINEL_PASSWORD: 'sentinel-secret' }))).sort(), ['AUTHGATE_REDIS_SENTINEL_PASSWORD', 'AUTHGATE_REDIS_SENTINEL_USERNAME'], 'each named');
    const unread = errorsOf(t, loadConfig({ ...sentinels, AUTHGATE_REDIS_TLS: 'on', AUTHGATE_REDIS_TLS_CA_FILE: join(dir, 'missing.pem') }));
    t.notOk(unread.join(' ').includes(dir), 'the path is not echoed either');
  });

  t.test('cluster nodes', async (t) => {
    const config = ok(t, loadConfig({ AUTHGATE_REDIS_CLUSTER_NODES: 'c1:7000,c2:7001', AUTHGATE_REDIS_PREFIX: 'ag:', AUTHGATE_REDIS_TIMEOUT_MS: '250' }));
    t.same(config.store, {
      kind: 'redis',
      clusterNodes: [{ host: 'c1', port: 7000 }, { host: 'c2', port: 7001 }],
      prefix: 'ag:',
      commandTimeoutMs: 250,
      waitReplicas: 0,
    });
  });

  t.test('AUTHGATE_REDIS_WAIT_REPLICAS: a count of replicas, 0 to 16', async (t) => {
    const config = ok(t, loadConfig({ AUTHGATE_REDIS_URL: 'redis://r:6379', AUTHGATE_REDIS_WAIT_REPLICAS: '1' }));
    t.match(config.store, { kind: 'redis', waitReplicas: 1 });
    for (const bad of ['-1', '17', 'one']) {
      t.same(names(errorsOf(t, loadConfig({ AUTHGATE_REDIS_URL: 'redis://r:6379', AUTHGATE_REDIS_WAIT_REPLICAS: bad }))), ['AUTHGATE_REDIS_WAIT_REPLICAS'], bad);
    }
  });
});

t.test('trust proxy', async (t) => {
  t.equal(ok(t, loadConfig({ AUTHGATE_TRUST_PROXY: 'true' })).trustProxy, true);
  t.equal(ok(t, loadConfig({ AUTHGATE_TRUST_PROXY: 'false' })).trustProxy, false);
  t.equal(ok(t, loadConfig({ AUTHGATE_TRUST_PROXY: '2' })).trustProxy, 2);
  t.equal(ok(t, loadConfig({ AUTHGATE_TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' })).trustProxy, '10.0.0.0/8, 127.0.0.1');
  t.same(names(errorsOf(t, loadConfig({ AUTHGATE_TRUST_PROXY: 'yes' }))), ['AUTHGATE_TRUST_PROXY']);
});

t.test('trust proxy: an address list proxy-addr would refuse stops the start in one line, not with a stack', async (t) => {
  for (const list of ['127.0.0.1', '10.0.0.0/8', '::1', 'fd00::/8, 10.0.0.1/32', '::ffff:10.0.0.1']) {
    t.equal(ok(t, loadConfig({ AUTHGATE_TRUST_PROXY: list })).trustProxy, list);
  }
  for (const list of ['999.1.1.1', '10.0.0.0/33', '10.0.0.0/0', '::1/129', '10.0.0.0/8,', ',', '10.0.0.0/255.0.0.0', '10.0.0.1/8/8', '1.2.3']) {
    t.same(names(errorsOf(t, loadConfig({ AUTHGATE_TRUST_PROXY: list }))), ['AUTHGATE_TRUST_PROXY'], list);
  }
});

t.test('upstream URL: a base path is accepted, a query or fragment refused in one line', async (t) => {
  t.equal(ok(t, loadConfig({ AUTHGATE_UPSTREAM_URL: 'http://svc/v1' })).upstream.url, 'http://svc/v1');
  t.equal(ok(t, loadConfig({ AUTHGATE_UPSTREAM_URL: 'https://svc:8443/api/v1/' })).upstream.url, 'https://svc:8443/api/v1/');
  for (const url of ['http://svc/v1?tenant=a', 'http://svc/#x', 'http://svc?']) {
    const errors = errorsOf(t, loadConfig({ AUTHGATE_UPSTREAM_URL: url }));
    t.same(names(errors), ['AUTHGATE_UPSTREAM_URL'], url);
    t.match(errors[0], /query or fragment/);
    t.notMatch(errors.join(' '), /tenant/, 'the value is not echoed');
  }
});

t.test('the returned config is deep-frozen', async (t) => {
  const config = ok(t, loadConfig({ ...PRODUCTION, AUTHGATE_REDIS_URL: undefined, AUTHGATE_REDIS_SENTINELS: 'a:1,b:2', AUTHGATE_JWT_PREVIOUS_SECRETS: 'previous-jwt-secret-0123456789abcdef' }));
  // Every object reachable from the config, including any added later.
  const walk = (value: unknown, path: string): number => {
    if (value === null || typeof value !== 'object') return 0;
    t.ok(Object.isFrozen(value), `${path} is frozen`);
    return 1 + Object.entries(value).reduce((n, [k, v]) => n + walk(v, `${path}.${k}`), 0);
  };
  t.ok(walk(config, 'config') >= 12, 'walked the nested objects');
  if (config.store.kind !== 'redis' || config.store.sentinels === undefined) throw new Error('expected sentinels');
  t.ok(Object.isFrozen(config.store.sentinels));
  for (const s of config.store.sentinels) t.ok(Object.isFrozen(s));
  t.throws(() => {
    (config.cache as { max: number }).max = 1;
  }, TypeError);
  t.equal(config.cache.max, 100_000);
});

t.test('blank values count as unset', async (t) => {
  const config = ok(t, loadConfig({ AUTHGATE_PORT: '  ', AUTHGATE_JWT_SECRET: '', AUTHGATE_STORE: ' ' }));
  t.equal(config.publicListener.port, 8080);
  t.equal(config.jwt.generated, true);
  t.same(config.store, { kind: 'memory' });
});

t.test('identity assertion', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'authgate-identity-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, content: string) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };
  const KEY_FILE = 'AUTHGATE_IDENTITY_KEY_FILE';
  const PUBLISHED = 'AUTHGATE_IDENTITY_PUBLISHED_KEY_FILES';
  const { AUTHGATE_IDENTITY_KEY_FILE: _, ...productionWithoutKey } = PRODUCTION;

  const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const ed25519 = generateKeyPairSync('ed25519');
  const pem = {
    pkcs8: p256.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    sec1: p256.privateKey.export({ type: 'sec1', format: 'pem' }) as string,
    ed25519: ed25519.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    publicP256: p256.publicKey.export({ type: 'spki', format: 'pem' }) as string,
    publicEd25519: ed25519.publicKey.export({ type: 'spki', format: 'pem' }) as string,
    rsa: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    rsaPublic: generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'pem' }) as string,
    p384: generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
  };
  const jwk = {
    p256: JSON.stringify(p256.privateKey.export({ format: 'jwk' })),
    ed25519: JSON.stringify(ed25519.privateKey.export({ format: 'jwk' })),
    publicP256: JSON.stringify(p256.publicKey.export({ format: 'jwk' })),
    publicEd25519: JSON.stringify(ed25519.publicKey.export({ format: 'jwk' })),
  };
  t.ok(pem.sec1.startsWith(pemBegin('EC PRIVATE KEY')), 'the SEC1 form really is SEC1');

  /** Any sizeable piece of a file's text: a line of a PEM body, a JWK member's value. */
  const pieces = (text: string) => text.split(/[\n",:{}]/).filter((p) => p.length >= 16 && !p.startsWith('-----'));
  const assertNoContent = (t: Asserts, errors: string[], text: string, what: string) => {
    const joined = errors.join(' ');
    t.notOk(joined.includes(text.trim()), `${what}: the file's text is not in the error`);
    t.notOk(pieces(text).some((p) => joined.includes(p)), `${what}: nor any piece of it`);
  };

  t.test('production needs a signing key while the assertion is on', async (t) => {
    const errors = errorsOf(t, loadConfig(productionWithoutKey));
    t.same(names(errors), [KEY_FILE]);
    t.match(errors[0], /required in production/);
    t.match(errors[0], /AUTHGATE_IDENTITY_ASSERTION/, 'and says how to turn the assertion off');

    const off = ok(t, loadConfig({ ...productionWithoutKey, AUTHGATE_IDENTITY_ASSERTION: 'off' }));
    t.same(off.identity, { mode: 'off' }, 'off needs no key');

    const on = ok(t, loadConfig(PRODUCTION));
    t.equal(on.identity.mode, 'on');
    t.ok(on.identity.mode === 'on' && on.identity.signingKey?.includes(pemBegin('PRIVATE KEY')), 'the key file is read at start');
  });

  t.test('development without a key: on, the key generated later per start', async (t) => {
    const config = ok(t, loadConfig({}));
    t.same(config.identity, { mode: 'on', signingKey: undefined, publishedKeys: [], audience: undefined, ttlSeconds: 60, jwksOnPublicPort: true });
  });

  t.test('the signing key: P-256 (PKCS#8 or SEC1 PEM, JWK) and Ed25519 (PEM, JWK) are accepted', async (t) => {
    const accepted: [string, string][] = [
      ['a P-256 PKCS#8 PEM', pem.pkcs8],
      ['a P-256 SEC1 "EC PRIVATE KEY" PEM', pem.sec1],
      ['an Ed25519 PKCS#8 PEM', pem.ed25519],
      ['a P-256 private JWK', jwk.p256],
      ['an Ed25519 private JWK', jwk.ed25519],
    ];
    for (const [i, [what, text]] of accepted.entries()) {
      const config = ok(t, loadConfig({ ...PRODUCTION, [KEY_FILE]: file(`good-${i}.key`, text) }));
      t.equal(config.identity.mode === 'on' && config.identity.signingKey, text, what);
    }
  });

  t.test('the signing key: anything else is refused in one line naming the setting, never quoting the file', async (t) => {
    mkdirSync(join(dir, 'a-directory'));
    const refused: [string, string | undefined, RegExp][] = [
      ['a file that is no key', 'this-is-not-a-key-0123456789abcdef\n', /not a private key/],
      ['an RSA key', pem.rsa, /P-256.*Ed25519/],
      ['a P-384 key', pem.p384, /P-256.*Ed25519/],
      ['a public key (PEM)', pem.publicP256, /not a private key/],
      ['a public key (JWK)', jwk.publicP256, /not a private key/],
      ['a JWK of a symmetric key', JSON.stringify({ kty: 'oct', k: 'c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0' }), /not a private key/],
      ['a missing file', undefined, /cannot be read/],
    ];
    for (const [i, [what, text, message]] of refused.entries()) {
      const path = text === undefined ? join(dir, 'missing.pem') : file(`bad-${i}.key`, text);
      const errors = errorsOf(t, loadConfig({ ...PRODUCTION, [KEY_FILE]: path }));
      t.same(names(errors), [KEY_FILE], what);
      t.match(errors[0], message, `${what}: ${errors[0]}`);
      if (text !== undefined) assertNoContent(t, errors, text, what);
    }
    const unreadable = errorsOf(t, loadConfig({ ...PRODUCTION, [KEY_FILE]: join(dir, 'a-directory') }));
    t.same(names(unreadable), [KEY_FILE], 'a directory');
    t.match(unreadable[0], /cannot be read/);
  });

  t.test('published keys: public (or private) PEM and JWK, P-256 or Ed25519', async (t) => {
    const texts = [pem.publicP256, pem.publicEd25519, jwk.publicP256, jwk.publicEd25519, pem.ed25519];
    const files = texts.map((text, i) => file(`published-${i}.key`, text));
    const config = ok(t, loadConfig({ ...PRODUCTION, [PUBLISHED]: ` ${files.join(' , ')} ,` }));
    t.same(config.identity.mode === 'on' && config.identity.publishedKeys, texts, 'each file read, in order');
    const none = ok(t, loadConfig(PRODUCTION));
    t.same(none.identity.mode === 'on' && none.identity.publishedKeys, [], 'none by default');
  });

  t.test('a bad published key is refused naming its file, never quoting it', async (t) => {
    const good = file('published-good.pem', pem.publicP256);
    const cases: [string, string | undefined][] = [
      ['a file that is no key', 'not-a-public-key-either-0123456789\n'],
      ['an RSA public key', pem.rsaPublic],
      ['a P-384 key', pem.p384],
      ['a missing file', undefined],
    ];
    for (const [i, [what, text]] of cases.entries()) {
      const path = text === undefined ? join(dir, 'published-missing.pem') : file(`published-bad-${i}.pem`, text);
      const errors = errorsOf(t, loadConfig({ ...PRODUCTION, [PUBLISHED]: `${good},${path}` }));
      t.same(names(errors), [PUBLISHED], what);
      t.ok(errors[0]!.includes(path), `${what}: the error names ${path}`);
      t.notOk(errors[0]!.includes(good), `${what}: and not the good file`);
      if (text !== undefined) assertNoContent(t, errors, text, what);
    }
  });

  t.test('with the assertion off its keys and audience are refused, not ignored', async (t) => {
    const key = file('off.pem', pem.pkcs8);
    for (const [name, value] of [[KEY_FILE, key], [PUBLISHED, key], ['AUTHGATE_IDENTITY_AUDIENCE', 'https://api.internal']] as const) {
      const errors = errorsOf(t, loadConfig({ ...productionWithoutKey, AUTHGATE_IDENTITY_ASSERTION: 'off', [name]: value }));
      t.same(names(errors), [name], name);
      t.match(errors[0], /AUTHGATE_IDENTITY_ASSERTION is off/);
    }
    const dev = errorsOf(t, loadConfig({ AUTHGATE_IDENTITY_ASSERTION: 'off', [KEY_FILE]: key }));
    t.same(names(dev), [KEY_FILE], 'in development too');
    t.same(names(errorsOf(t, loadConfig({ AUTHGATE_IDENTITY_ASSERTION: 'yes' }))), ['AUTHGATE_IDENTITY_ASSERTION'], 'on or off only');
  });

  t.test('lifetime, audience and the JWKS on the public port', async (t) => {
    for (const ttl of ['9', '3601', '0', '1.5', 'sixty']) {
      t.same(names(errorsOf(t, loadConfig({ AUTHGATE_IDENTITY_TTL_SECONDS: ttl }))), ['AUTHGATE_IDENTITY_TTL_SECONDS'], `ttl ${ttl}`);
    }
    for (const ttl of [10, 300, 3600]) {
      const config = ok(t, loadConfig({ AUTHGATE_IDENTITY_TTL_SECONDS: String(ttl) }));
      t.equal(config.identity.mode === 'on' && config.identity.ttlSeconds, ttl, `ttl ${ttl}`);
    }
    const config = ok(t, loadConfig({ ...PRODUCTION, AUTHGATE_IDENTITY_AUDIENCE: 'https://api.internal', AUTHGATE_IDENTITY_JWKS_ON_PUBLIC_PORT: 'on' }));
    t.equal(config.identity.mode === 'on' && config.identity.audience, 'https://api.internal');
    t.equal(config.identity.mode === 'on' && config.identity.jwksOnPublicPort, true);
    t.same(names(errorsOf(t, loadConfig({ AUTHGATE_IDENTITY_JWKS_ON_PUBLIC_PORT: 'true' }))), ['AUTHGATE_IDENTITY_JWKS_ON_PUBLIC_PORT']);
  });
});

t.test('AUTHGATE_WEBAUTHN_RP_ID and AUTHGATE_WEBAUTHN_ORIGINS: localhost outside production, both or none in production, origins on the RP ID\'s domain', async (t) => {
  t.same(ok(t, loadConfig({})).webauthn, { rpId: 'localhost', origins: ['http://localhost:8080'] }, 'development: localhost and the public port');
  t.same(ok(t, loadConfig({ AUTHGATE_PORT: '3000' })).webauthn, { rpId: 'localhost', origins: ['http://localhost:3000'] });
  t.equal(ok(t, loadConfig(PRODUCTION)).webauthn, undefined, 'production without them: no passkeys (registration 409, 1231)');
  const set = ok(t, loadConfig({ ...PRODUCTION, AUTHGATE_WEBAUTHN_RP_ID: 'Example.com', AUTHGATE_WEBAUTHN_ORIGINS: 'https://console.example.com, HTTPS://EXAMPLE.COM:443' }));
  t.same(set.webauthn, { rpId: 'example.com', origins: ['https://console.example.com', 'https://example.com'] }, 'as browsers send them');
  for (const [given, missing] of [['AUTHGATE_WEBAUTHN_RP_ID', 'AUTHGATE_WEBAUTHN_ORIGINS'], ['AUTHGATE_WEBAUTHN_ORIGINS', 'AUTHGATE_WEBAUTHN_RP_ID']] as const) {
    const errors = errorsOf(t, loadConfig({ ...PRODUCTION, [given]: given === 'AUTHGATE_WEBAUTHN_RP_ID' ? 'example.com' : 'https://example.com' }));
    t.same(names(errors), [missing], `production with ${given} alone names ${missing}`);
  }
  for (const origins of ['https://evil.test', 'https://notexample.com', 'https://example.com/console', 'console.example.com:443']) {
    const errors = errorsOf(t, loadConfig({ AUTHGATE_WEBAUTHN_RP_ID: 'example.com', AUTHGATE_WEBAUTHN_ORIGINS: origins }));
    t.same(names(errors), ['AUTHGATE_WEBAUTHN_ORIGINS'], `${origins} refused`);
    t.notOk(errors[0]!.includes(origins), 'and not echoed');
  }
  t.same(names(errorsOf(t, loadConfig({ AUTHGATE_WEBAUTHN_RP_ID: 'https://example.com' }))), ['AUTHGATE_WEBAUTHN_RP_ID'], 'an RP ID is a domain, not a URL');
});
