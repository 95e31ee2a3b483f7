/**
 * Turns the environment into a checked, frozen Config. Each setting is parsed and range-checked
 * by its kind from the table in config/settings.ts (setting-kinds.ts); what is left here are the
 * rules that span settings: production requirements, generated development secrets, distinct
 * ports. Groups of settings checked as a whole are read by modules of their own, lent the same
 * reader (SettingsReader): the store and its Redis topology (redis-store.ts, redis-tls.ts), the
 * public listener's TLS (tls.ts), the identity assertion's keys (identity-keys.ts), production's
 * refusal of shipped and weak secrets (shipped-secrets.ts), the notices and CORS
 * (notices-and-cors.ts), passkeys (webauthn.ts).
 */
import { randomBytes } from 'node:crypto';
import { parseRateLimit } from '../limits/rate-limit.js';
import type { Config, Environment } from './config.js';
import { formatRouteError, loadRoutesFile } from '../route-table/load.js';
import { readIdentity } from './identity-keys.js';
import { readCorsOrigins, readNotices } from './notices-and-cors.js';
import type { SettingsReader } from './redis-tls.js';
import { readStore } from './redis-store.js';
import { readWebauthn } from './webauthn.js';
import { speedTricksOf } from '../edge-authz/speed-tricks.js';
import { parseKind } from './setting-kinds.js';
import { refuseShippedAndWeakSecrets } from './shipped-secrets.js';
import { readTls } from './tls.js';
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
  /** What the modules that read a group of settings (redis-store.ts, tls.ts, …) are lent. */
  const reader: SettingsReader = { setting, given, fail, raw: read };

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

  const store = readStore(reader, production);
  if (production) refuseShippedAndWeakSecrets(reader, new Set(errors.map((e) => e.split(' ', 1)[0])));
  const logLevel = setting('LOG_LEVEL');
  const identity = readIdentity(reader, production);

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
    tls: readTls(reader),
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
    notices: readNotices(reader, production),
    console: { enabled: setting('AUTHGATE_CONSOLE') === 'on' },
    cors: { origins: readCorsOrigins(reader) },
    webauthn: readWebauthn(reader, production, publicListener.port),
    tracing: { enabled: setting('AUTHGATE_TRACING') === 'on', recordOrgId: setting('AUTHGATE_TRACING_ORG_ID') === 'on' },
    authz: {
      port: setting('AUTHGATE_AUTHZ_PORT'),
      host: setting('AUTHGATE_AUTHZ_HOST'),
      trustedProxies: setting('AUTHGATE_AUTHZ_TRUSTED_PROXIES') ?? ['loopback'],
      cacheSeconds: setting('AUTHGATE_AUTHZ_CACHE_SECONDS'),
    },
    authzSpeedTricks: speedTricksOf(setting('AUTHGATE_AUTHZ_SPEED_TRICKS_OFF') ?? [], (problem) => fail('AUTHGATE_AUTHZ_SPEED_TRICKS_OFF', problem)),
    authzGrpc: { port: authzGrpcPort, removeCredential: setting('AUTHGATE_AUTHZ_REMOVE_CREDENTIAL') === 'on' },
    routesFile: readRoutesFile(identity),
  };
  return errors.length > 0 ? { ok: false, errors } : { ok: true, config: deepFreeze(config) };

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

}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
