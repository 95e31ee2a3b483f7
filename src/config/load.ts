/**
 * Turns the environment into a checked, frozen Config. Each setting is parsed and range-checked
 * by its kind from the table in config/settings.ts (setting-kinds.ts); what is left here are the
 * rules that span settings: production requirements, generated development secrets, one Redis
 * topology, TLS consistency.
 */
import { randomBytes } from 'node:crypto';
import { parseRateLimit } from '../limits/rate-limit.js';
import { readFileSync } from 'node:fs';
import type { Config, Environment, StoreConfig } from './config.js';
import { keyProblem } from '../identity/signing-keys.js';
import { formatRouteError, loadRoutesFile } from '../route-table/load.js';
import { tlsKeyPairProblems } from './pem.js';
import { readCorsOrigins, readNotices } from './notices-and-cors.js';
import { readRedisTls } from './redis-tls.js';
import { readWebauthn } from './webauthn.js';
import { parseKind } from './setting-kinds.js';
import { isShippedSecret, redisUrlPassword, weakSecretProblem } from './shipped-secrets.js';
import { settingSpec, type SettingName, type SettingSpec, type SettingValue, type SpecOf } from './settings.js';

export type Env = Readonly<Record<string, string | undefined>>;
export type LoadResult = { ok: true; config: Config } | { ok: false; errors: string[] };

/** A setting with a default in the table always has a value; one without may be undefined. */
export type Loaded<N extends SettingName> = SpecOf<N> extends { default: unknown } ? SettingValue<N> : SettingValue<N> | undefined;

/**
 * Reads every setting from `env` in one pass. A bad setting is reported by name, never by
 * value (values may be secrets); all of them at once, so one start shows every mistake.
 */
export function loadConfig(env: Env): LoadResult {
  const errors: string[] = [];
  const read = (name: SettingName): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  /** Set to a non-blank value, valid or not. */
  const given = (name: SettingName): boolean => read(name) !== undefined;
  const fail = (name: SettingName, problem: string): undefined => {
    errors.push(`${name} ${problem}`);
    return undefined;
  };
  // Parsed when first asked for, once: a setting only some configurations use (the Sentinel
  // name, the Redis prefix) is checked only in those, and errors come in the order of the rules.
  const parsed = new Map<SettingName, unknown>();
  let production = false; // set from NODE_ENV just below; NODE_ENV has no production default itself
  /** The value by the table: parsed and range-checked, else the table's default (also after a refusal). */
  const setting = <N extends SettingName>(name: N): Loaded<N> => {
    if (!parsed.has(name)) {
      const spec: SettingSpec = settingSpec(name);
      const raw = read(name);
      const result = raw === undefined ? undefined : parseKind(spec.type, raw);
      if (result !== undefined && !result.ok) fail(name, result.problem);
      const fallback = production && spec.productionDefault !== undefined ? spec.productionDefault : spec.default;
      parsed.set(name, result?.ok ? result.value : fallback);
    }
    return parsed.get(name) as Loaded<N>;
  };

  production = setting('NODE_ENV') === 'production';
  const environment: Environment = setting('AUTHGATE_ENVIRONMENT');

  const publicListener = { host: setting('AUTHGATE_HOST'), port: setting('AUTHGATE_PORT') };
  const opsListener = { host: setting('AUTHGATE_OPS_HOST'), port: setting('AUTHGATE_OPS_PORT') };
  if (publicListener.port !== 0 && publicListener.port === opsListener.port) {
    fail('AUTHGATE_OPS_PORT', 'must differ from AUTHGATE_PORT: the ops port is never served publicly');
  }
  const authzPort = setting('AUTHGATE_AUTHZ_PORT');
  if (authzPort !== undefined && authzPort !== 0 && (authzPort === publicListener.port || authzPort === opsListener.port)) {
    fail('AUTHGATE_AUTHZ_PORT', 'must differ from AUTHGATE_PORT and AUTHGATE_OPS_PORT: a client must not reach it on the public port');
  }
  const authzGrpcPort = setting('AUTHGATE_AUTHZ_GRPC_PORT');
  if (authzGrpcPort !== undefined && authzGrpcPort !== 0 && [publicListener.port, opsListener.port, authzPort].includes(authzGrpcPort)) {
    fail('AUTHGATE_AUTHZ_GRPC_PORT', 'must differ from AUTHGATE_PORT, AUTHGATE_OPS_PORT and AUTHGATE_AUTHZ_PORT: it is a listener of its own');
  }

  // Production needs real secrets; development makes them up per start (and says so).
  const jwtGenerated = !given('AUTHGATE_JWT_SECRET') && !production;
  if (!given('AUTHGATE_JWT_SECRET') && production) fail('AUTHGATE_JWT_SECRET', 'is required in production');
  const jwtSecret = setting('AUTHGATE_JWT_SECRET') ?? randomBytes(32).toString('base64url');
  const previousSecrets = setting('AUTHGATE_JWT_PREVIOUS_SECRETS') ?? [];

  // Like the JWT secret: made up per start in development; in production never, and then no enrolment.
  const mfaGenerated = !given('AUTHGATE_MFA_ENCRYPTION_KEY') && !production;
  const mfaKey = setting('AUTHGATE_MFA_ENCRYPTION_KEY') ?? (production ? undefined : randomBytes(32).toString('base64url'));

  const adminGenerated = !given('AUTHGATE_ADMIN_TOKEN') && !production;
  if (!given('AUTHGATE_ADMIN_TOKEN') && production) fail('AUTHGATE_ADMIN_TOKEN', 'is required in production');
  const adminToken = setting('AUTHGATE_ADMIN_TOKEN') ?? randomBytes(24).toString('base64url');

  const upstreamUrl = setting('AUTHGATE_UPSTREAM_URL');
  if (!given('AUTHGATE_UPSTREAM_URL') && production) fail('AUTHGATE_UPSTREAM_URL', 'is required in production');

  const store = readStore();
  if (production) refuseShippedAndWeakSecrets();
  const logLevel = setting('LOG_LEVEL');
  const identity = readIdentity();

  const config: Config = {
    production,
    environment,
    publicListener,
    opsListener,
    jwt: {
      secret: jwtSecret,
      previousSecrets,
      issuer: setting('AUTHGATE_JWT_ISSUER'),
      ttlSeconds: setting('AUTHGATE_TOKEN_TTL_SECONDS'),
      generated: jwtGenerated,
    },
    admin: { token: adminToken, generated: adminGenerated },
    mfa: { encryptionKey: mfaKey, previousKeys: setting('AUTHGATE_MFA_PREVIOUS_ENCRYPTION_KEYS') ?? [], generated: mfaGenerated, failureLimit: setting('AUTHGATE_MFA_FAILURE_LIMIT') },
    identity,
    upstream: { url: upstreamUrl, timeoutMs: setting('AUTHGATE_UPSTREAM_TIMEOUT_MS') },
    store,
    cache: {
      max: setting('AUTHGATE_CACHE_MAX'),
      ttlSeconds: setting('AUTHGATE_CACHE_TTL_SECONDS'),
      negativeTtlSeconds: setting('AUTHGATE_NEGATIVE_CACHE_TTL_SECONDS'),
      negativeMax: setting('AUTHGATE_NEGATIVE_CACHE_MAX'),
    },
    trustProxy: setting('AUTHGATE_TRUST_PROXY'),
    tls: readTls(),
    shutdown: {
      delaySeconds: setting('AUTHGATE_SHUTDOWN_DELAY_SECONDS'),
      graceSeconds: setting('AUTHGATE_SHUTDOWN_GRACE_SECONDS'),
    },
    shedding: {
      maxEventLoopDelayMs: setting('AUTHGATE_SHED_EVENT_LOOP_DELAY_MS'),
      maxEventLoopUtilization: setting('AUTHGATE_SHED_EVENT_LOOP_UTILIZATION_PERCENT') / 100,
    },
    log: { level: logLevel },
    audit: { maxEvents: setting('AUTHGATE_AUDIT_MAX_EVENTS'), maxAgeMs: setting('AUTHGATE_AUDIT_MAX_AGE_DAYS') * 24 * 60 * 60 * 1000 },
    rateLimit: { default: parseRateLimit(setting('AUTHGATE_RATE_LIMIT')) },
    tenantLimits: {
      maxKeys: setting('AUTHGATE_MAX_KEYS_PER_ORGANIZATION'),
      keyCreation: parseRateLimit(setting('AUTHGATE_KEY_CREATION_RATE_LIMIT')),
      maxSessions: setting('AUTHGATE_MAX_SESSIONS_PER_ORGANIZATION'),
      sessionCreation: parseRateLimit(setting('AUTHGATE_SESSION_CREATION_RATE_LIMIT')),
    },
    passwords: { minLength: setting('AUTHGATE_PASSWORD_MIN_LENGTH'), resetTtlSeconds: setting('AUTHGATE_PASSWORD_RESET_TTL_SECONDS') },
    notices: readNotices({ setting, given, fail }, production),
    console: { enabled: setting('AUTHGATE_CONSOLE') === 'on' },
    cors: { origins: readCorsOrigins({ setting, given, fail }) },
    webauthn: readWebauthn({ setting, given, fail }, production, publicListener.port),
    tracing: { enabled: setting('AUTHGATE_TRACING') === 'on', recordOrgId: setting('AUTHGATE_TRACING_ORG_ID') === 'on' },
    authz: {
      port: setting('AUTHGATE_AUTHZ_PORT'),
      host: setting('AUTHGATE_AUTHZ_HOST'),
      trustedProxies: setting('AUTHGATE_AUTHZ_TRUSTED_PROXIES') ?? ['loopback'],
      cacheSeconds: setting('AUTHGATE_AUTHZ_CACHE_SECONDS'),
    },
    authzGrpc: { port: authzGrpcPort, removeCredential: setting('AUTHGATE_AUTHZ_REMOVE_CREDENTIAL') === 'on' },
    routesFile: readRoutesFile(identity),
  };
  return errors.length > 0 ? { ok: false, errors } : { ok: true, config: deepFreeze(config) };

  /**
   * Production runs on no secret the repository shows (config/shipped-secrets.ts), and on no weak
   * one of its own (the JWT secrets, the admin token). A setting already refused for its form is
   * not named twice.
   */
  function refuseShippedAndWeakSecrets(): void {
    const refused = new Set(errors.map((e) => e.split(' ', 1)[0]));
    const check = (name: SettingName, values: readonly (string | undefined)[], own: boolean) => {
      if (refused.has(name)) return;
      if (values.some((value) => value !== undefined && isShippedSecret(value))) {
        fail(name, 'is a value shipped in the repository\'s examples or docs, public to anyone: set a secret of your own');
        return;
      }
      const weak = own ? values.map((value) => (value === undefined ? undefined : weakSecretProblem(value))).find((p) => p !== undefined) : undefined;
      if (weak !== undefined) fail(name, weak);
    };
    check('AUTHGATE_JWT_SECRET', [read('AUTHGATE_JWT_SECRET')], true);
    check('AUTHGATE_JWT_PREVIOUS_SECRETS', setting('AUTHGATE_JWT_PREVIOUS_SECRETS') ?? [], true);
    check('AUTHGATE_ADMIN_TOKEN', [read('AUTHGATE_ADMIN_TOKEN')], true);
    check('AUTHGATE_MFA_ENCRYPTION_KEY', [read('AUTHGATE_MFA_ENCRYPTION_KEY')], true);
    check('AUTHGATE_MFA_PREVIOUS_ENCRYPTION_KEYS', setting('AUTHGATE_MFA_PREVIOUS_ENCRYPTION_KEYS') ?? [], true);
    const url = read('AUTHGATE_REDIS_URL');
    check('AUTHGATE_REDIS_URL', [url === undefined ? undefined : redisUrlPassword(url)], false);
    check('AUTHGATE_REDIS_PASSWORD', [read('AUTHGATE_REDIS_PASSWORD')], false);
    check('AUTHGATE_REDIS_SENTINEL_PASSWORD', [read('AUTHGATE_REDIS_SENTINEL_PASSWORD')], false);
  }

  function readStore(): StoreConfig {
    const sentinels = setting('AUTHGATE_REDIS_SENTINELS');
    const clusterNodes = setting('AUTHGATE_REDIS_CLUSTER_NODES');
    // A URL counts as soon as it is set (its scheme is checked below); a list once it parses.
    const topologies = [given('AUTHGATE_REDIS_URL'), sentinels !== undefined, clusterNodes !== undefined].filter(Boolean).length;
    const chosen = setting('AUTHGATE_STORE');
    if (chosen === undefined && given('AUTHGATE_STORE')) return { kind: 'memory' }; // refused by its kind
    const kind = chosen ?? (topologies > 0 ? 'redis' : production ? undefined : 'memory');
    if (kind === undefined) {
      fail('AUTHGATE_STORE', 'must be set: production needs AUTHGATE_REDIS_URL, _SENTINELS or _CLUSTER_NODES, or AUTHGATE_STORE=memory on purpose');
      return { kind: 'memory' };
    }
    if (kind === 'memory') return { kind: 'memory' };
    if (topologies !== 1) {
      fail('AUTHGATE_STORE', 'redis needs exactly one of AUTHGATE_REDIS_URL, AUTHGATE_REDIS_SENTINELS, AUTHGATE_REDIS_CLUSTER_NODES');
    }
    const url = setting('AUTHGATE_REDIS_URL');
    const sentinelUsername = setting('AUTHGATE_REDIS_SENTINEL_USERNAME');
    const sentinelPassword = setting('AUTHGATE_REDIS_SENTINEL_PASSWORD');
    if (sentinels === undefined) {
      if (sentinelUsername !== undefined) fail('AUTHGATE_REDIS_SENTINEL_USERNAME', 'is only used with AUTHGATE_REDIS_SENTINELS');
      if (sentinelPassword !== undefined) fail('AUTHGATE_REDIS_SENTINEL_PASSWORD', 'is only used with AUTHGATE_REDIS_SENTINELS');
    } else if (sentinelUsername !== undefined && sentinelPassword === undefined) {
      fail('AUTHGATE_REDIS_SENTINEL_USERNAME', 'needs AUTHGATE_REDIS_SENTINEL_PASSWORD');
    }
    // As written, valid or not: a contradiction with the TLS setting is reported either way.
    const tls = readRedisTls(read('AUTHGATE_REDIS_URL'), { setting, given, fail });
    const username = setting('AUTHGATE_REDIS_USERNAME');
    const password = setting('AUTHGATE_REDIS_PASSWORD');
    const optional = <T>(value: T | undefined) => (value === undefined ? {} : value);
    return {
      kind: 'redis',
      ...optional(url && { url }),
      ...optional(sentinels && { sentinels, sentinelName: setting('AUTHGATE_REDIS_SENTINEL_NAME') }),
      ...optional(sentinelUsername !== undefined && sentinels !== undefined && { sentinelUsername }),
      ...optional(sentinelPassword !== undefined && sentinels !== undefined && { sentinelPassword }),
      ...optional(clusterNodes && { clusterNodes }),
      ...optional(username !== undefined && { username }),
      ...optional(password !== undefined && { password }),
      ...optional(tls && { tls }),
      prefix: setting('AUTHGATE_REDIS_PREFIX'),
      commandTimeoutMs: setting('AUTHGATE_REDIS_TIMEOUT_MS'),
      waitReplicas: setting('AUTHGATE_REDIS_WAIT_REPLICAS'),
    };
  }

  /**
   * The identity assertion's keys, read from their files and checked here, so a bad key stops the
   * start with its setting's name (never its content). Production needs a signing key while the
   * assertion is on: replicas with keys of their own would each sign what the others' JWKS does
   * not hold.
   */
  function readIdentity(): Config['identity'] {
    const keySettings = ['AUTHGATE_IDENTITY_KEY_FILE', 'AUTHGATE_IDENTITY_PUBLISHED_KEY_FILES', 'AUTHGATE_IDENTITY_AUDIENCE'] as const;
    if (setting('AUTHGATE_IDENTITY_ASSERTION') === 'off') {
      for (const name of [...keySettings, 'AUTHGATE_IDENTITY_TTL_SECONDS'] as const) if (given(name)) fail(name, 'is set but AUTHGATE_IDENTITY_ASSERTION is off');
      if (given('AUTHGATE_IDENTITY_JWKS_ON_PUBLIC_PORT') && setting('AUTHGATE_IDENTITY_JWKS_ON_PUBLIC_PORT') === 'on') fail('AUTHGATE_IDENTITY_JWKS_ON_PUBLIC_PORT', 'is on but AUTHGATE_IDENTITY_ASSERTION is off: there are no keys to serve');
      return { mode: 'off' };
    }
    const keyFile = setting('AUTHGATE_IDENTITY_KEY_FILE');
    if (keyFile === undefined && production) {
      fail('AUTHGATE_IDENTITY_KEY_FILE', 'is required in production while AUTHGATE_IDENTITY_ASSERTION is on (or set it off)');
    }
    const readKey = (name: 'AUTHGATE_IDENTITY_KEY_FILE' | 'AUTHGATE_IDENTITY_PUBLISHED_KEY_FILES', file: string, want: 'private' | 'public') => {
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        return fail(name, `cannot be read${name === 'AUTHGATE_IDENTITY_PUBLISHED_KEY_FILES' ? ` (${file})` : ''}`);
      }
      const problem = keyProblem(text, want);
      return problem === undefined ? text : fail(name, `${problem}${name === 'AUTHGATE_IDENTITY_PUBLISHED_KEY_FILES' ? ` (${file})` : ''}`);
    };
    const signingKey = keyFile === undefined ? undefined : readKey('AUTHGATE_IDENTITY_KEY_FILE', keyFile, 'private');
    const publishedKeys = (setting('AUTHGATE_IDENTITY_PUBLISHED_KEY_FILES') ?? []).flatMap((file) => readKey('AUTHGATE_IDENTITY_PUBLISHED_KEY_FILES', file, 'public') ?? []);
    return {
      mode: 'on',
      signingKey,
      publishedKeys,
      audience: setting('AUTHGATE_IDENTITY_AUDIENCE'),
      ttlSeconds: setting('AUTHGATE_IDENTITY_TTL_SECONDS'),
      jwksOnPublicPort: setting('AUTHGATE_IDENTITY_JWKS_ON_PUBLIC_PORT') === 'on',
    };
  }

  /**
   * The routes file, checked as a start (and `authgate routes check`) checks it: every error, one
   * per line with its place in the file. Without AUTHGATE_UPSTREAM_URL (development's example
   * upstream, whose address is known only once it listens) `default` is checked with a stand-in.
   */
  function readRoutesFile(identity: Config['identity']): Config['routesFile'] {
    const path = setting('AUTHGATE_ROUTES_FILE');
    if (path === undefined) return undefined;
    const loaded = loadRoutesFile(path, {
      defaultUpstreamUrl: upstreamUrl ?? 'http://127.0.0.1/',
      upstreamTimeoutMs: setting('AUTHGATE_UPSTREAM_TIMEOUT_MS'),
      defaultAudience: identity.mode === 'on' ? identity.audience : undefined,
    });
    if (!loaded.ok) {
      for (const error of loaded.errors) fail('AUTHGATE_ROUTES_FILE', formatRouteError(error));
      return undefined;
    }
    return { path, file: loaded.file };
  }

  function readTls(): Config['tls'] {
    const mode = setting('AUTHGATE_TLS');
    const certFile = setting('AUTHGATE_TLS_CERT_FILE');
    const keyFile = setting('AUTHGATE_TLS_KEY_FILE');
    if ((certFile === undefined) !== (keyFile === undefined)) {
      fail(certFile === undefined ? 'AUTHGATE_TLS_CERT_FILE' : 'AUTHGATE_TLS_KEY_FILE', 'must be set together with the other TLS file');
    }
    if (certFile !== undefined && keyFile !== undefined) {
      if (mode === 'off' || mode === 'offloaded') fail('AUTHGATE_TLS', 'cannot be off or offloaded while TLS files are set');
      const pair = tlsKeyPairProblems({ name: 'AUTHGATE_TLS_CERT_FILE', file: certFile }, { name: 'AUTHGATE_TLS_KEY_FILE', file: keyFile });
      for (const { name, problem } of pair) fail(name, problem);
      return { mode: 'on', certFile, keyFile };
    }
    if (mode === 'on') fail('AUTHGATE_TLS_CERT_FILE', 'and AUTHGATE_TLS_KEY_FILE are required when AUTHGATE_TLS=on');
    return { mode: mode === 'offloaded' ? 'offloaded' : 'off' };
  }
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
