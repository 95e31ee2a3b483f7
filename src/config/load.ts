import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import type { Config, Environment, HostPort, RedisTlsConfig, StoreConfig } from './config.js';
import type { SettingName } from './settings.js';

export type Env = Readonly<Record<string, string | undefined>>;
export type LoadResult = { ok: true; config: Config } | { ok: false; errors: string[] };

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const MIN_JWT_SECRET_BYTES = 32;
const MIN_ADMIN_TOKEN_LENGTH = 16;

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
  const fail = (name: SettingName, problem: string): undefined => {
    errors.push(`${name} ${problem}`);
    return undefined;
  };
  const integer = (name: SettingName, fallback: number, min: number, max: number): number => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    const value = /^\d+$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      fail(name, `must be a whole number from ${min} to ${max}`);
      return fallback;
    }
    return value;
  };
  const hostPorts = (name: SettingName): HostPort[] | undefined => {
    const raw = read(name);
    if (raw === undefined) return undefined;
    const list: HostPort[] = [];
    for (const item of raw.split(',')) {
      const match = /^\s*(\[[^\]]+\]|[^:\s]+):(\d{1,5})\s*$/.exec(item);
      const port = match ? Number(match[2]) : NaN;
      if (!match || port < 1 || port > 65535) return fail(name, 'must be a comma-separated list of host:port');
      list.push({ host: match[1]!.replace(/^\[|\]$/g, ''), port });
    }
    return list;
  };

  const nodeEnv = read('NODE_ENV') ?? 'development';
  const production = nodeEnv === 'production';

  const environmentRaw = read('AUTHGATE_ENVIRONMENT');
  let environment: Environment = production ? 'production' : 'sandbox';
  if (environmentRaw !== undefined) {
    if (environmentRaw === 'production' || environmentRaw === 'sandbox') environment = environmentRaw;
    else fail('AUTHGATE_ENVIRONMENT', 'must be production or sandbox');
  }

  const publicListener = { host: read('AUTHGATE_HOST') ?? '0.0.0.0', port: integer('AUTHGATE_PORT', 8080, 0, 65535) };
  const opsListener = { host: read('AUTHGATE_OPS_HOST') ?? '0.0.0.0', port: integer('AUTHGATE_OPS_PORT', 9090, 0, 65535) };
  if (publicListener.port !== 0 && publicListener.port === opsListener.port) {
    fail('AUTHGATE_OPS_PORT', 'must differ from AUTHGATE_PORT: the ops port is never served publicly');
  }

  let jwtSecret = read('AUTHGATE_JWT_SECRET');
  const jwtGenerated = jwtSecret === undefined && !production;
  if (jwtSecret === undefined) {
    if (production) fail('AUTHGATE_JWT_SECRET', 'is required in production');
    jwtSecret = randomBytes(32).toString('base64url');
  } else if (Buffer.byteLength(jwtSecret) < MIN_JWT_SECRET_BYTES) {
    fail('AUTHGATE_JWT_SECRET', `must be at least ${MIN_JWT_SECRET_BYTES} bytes`);
  }
  const previousSecrets = (read('AUTHGATE_JWT_PREVIOUS_SECRETS') ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  if (previousSecrets.some((s) => Buffer.byteLength(s) < MIN_JWT_SECRET_BYTES)) {
    fail('AUTHGATE_JWT_PREVIOUS_SECRETS', `must each be at least ${MIN_JWT_SECRET_BYTES} bytes`);
  }

  let adminToken = read('AUTHGATE_ADMIN_TOKEN');
  const adminGenerated = adminToken === undefined && !production;
  if (adminToken === undefined) {
    if (production) fail('AUTHGATE_ADMIN_TOKEN', 'is required in production');
    adminToken = randomBytes(24).toString('base64url');
  } else if (adminToken.length < MIN_ADMIN_TOKEN_LENGTH) {
    fail('AUTHGATE_ADMIN_TOKEN', `must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters`);
  }

  const upstreamUrl = read('AUTHGATE_UPSTREAM_URL');
  if (upstreamUrl === undefined) {
    if (production) fail('AUTHGATE_UPSTREAM_URL', 'is required in production');
  } else if (!isHttpUrl(upstreamUrl)) {
    fail('AUTHGATE_UPSTREAM_URL', 'must be an http:// or https:// URL');
  } else if (/[?#]/.test(upstreamUrl)) {
    // A path is forwarded under (proxy/forward.ts); a query or fragment has nowhere to go.
    fail('AUTHGATE_UPSTREAM_URL', 'must not have a query or fragment (a base path such as /v1 is fine)');
  }

  const store = readStore();

  const logLevel = read('LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) fail('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);

  const config: Config = {
    production,
    environment,
    publicListener,
    opsListener,
    jwt: {
      secret: jwtSecret,
      previousSecrets,
      issuer: read('AUTHGATE_JWT_ISSUER') ?? 'authgate',
      ttlSeconds: integer('AUTHGATE_TOKEN_TTL_SECONDS', 3600, 1, 86_400),
      generated: jwtGenerated,
    },
    admin: { token: adminToken, generated: adminGenerated },
    upstream: { url: upstreamUrl, timeoutMs: integer('AUTHGATE_UPSTREAM_TIMEOUT_MS', 10_000, 1, 600_000) },
    store,
    cache: {
      max: integer('AUTHGATE_CACHE_MAX', 100_000, 0, 10_000_000),
      ttlSeconds: integer('AUTHGATE_CACHE_TTL_SECONDS', 60, 0, 3600),
      negativeTtlSeconds: integer('AUTHGATE_NEGATIVE_CACHE_TTL_SECONDS', 5, 0, 300),
    },
    trustProxy: readTrustProxy(),
    tls: readTls(),
    shutdown: {
      delaySeconds: integer('AUTHGATE_SHUTDOWN_DELAY_SECONDS', production ? 5 : 0, 0, 300),
      graceSeconds: integer('AUTHGATE_SHUTDOWN_GRACE_SECONDS', 25, 0, 3600),
    },
    shedding: {
      maxEventLoopDelayMs: integer('AUTHGATE_SHED_EVENT_LOOP_DELAY_MS', 1000, 0, 60_000),
      maxEventLoopUtilization: integer('AUTHGATE_SHED_EVENT_LOOP_UTILIZATION_PERCENT', 0, 0, 100) / 100,
    },
    log: { level: logLevel },
  };
  return errors.length > 0 ? { ok: false, errors } : { ok: true, config: deepFreeze(config) };

  function readStore(): StoreConfig {
    const url = read('AUTHGATE_REDIS_URL');
    const sentinels = hostPorts('AUTHGATE_REDIS_SENTINELS');
    const clusterNodes = hostPorts('AUTHGATE_REDIS_CLUSTER_NODES');
    const topologies = [url, sentinels, clusterNodes].filter((x) => x !== undefined).length;
    const kind = read('AUTHGATE_STORE') ?? (topologies > 0 ? 'redis' : production ? undefined : 'memory');
    if (kind === undefined) {
      fail('AUTHGATE_STORE', 'must be set: production needs AUTHGATE_REDIS_URL, _SENTINELS or _CLUSTER_NODES, or AUTHGATE_STORE=memory on purpose');
      return { kind: 'memory' };
    }
    if (kind === 'memory') return { kind: 'memory' };
    if (kind !== 'redis') {
      fail('AUTHGATE_STORE', 'must be memory or redis');
      return { kind: 'memory' };
    }
    if (topologies !== 1) {
      fail('AUTHGATE_STORE', 'redis needs exactly one of AUTHGATE_REDIS_URL, AUTHGATE_REDIS_SENTINELS, AUTHGATE_REDIS_CLUSTER_NODES');
    }
    if (url !== undefined && !/^rediss?:\/\//.test(url)) fail('AUTHGATE_REDIS_URL', 'must start with redis:// or rediss://');
    const sentinelUsername = read('AUTHGATE_REDIS_SENTINEL_USERNAME');
    const sentinelPassword = read('AUTHGATE_REDIS_SENTINEL_PASSWORD');
    if (sentinels === undefined) {
      if (sentinelUsername !== undefined) fail('AUTHGATE_REDIS_SENTINEL_USERNAME', 'is only used with AUTHGATE_REDIS_SENTINELS');
      if (sentinelPassword !== undefined) fail('AUTHGATE_REDIS_SENTINEL_PASSWORD', 'is only used with AUTHGATE_REDIS_SENTINELS');
    } else if (sentinelUsername !== undefined && sentinelPassword === undefined) {
      fail('AUTHGATE_REDIS_SENTINEL_USERNAME', 'needs AUTHGATE_REDIS_SENTINEL_PASSWORD');
    }
    const tls = readRedisTls(url);
    const optional = <T>(value: T | undefined) => (value === undefined ? {} : value);
    return {
      kind: 'redis',
      ...optional(url && { url }),
      ...optional(sentinels && { sentinels, sentinelName: read('AUTHGATE_REDIS_SENTINEL_NAME') ?? 'mymaster' }),
      ...optional(sentinelUsername !== undefined && sentinels !== undefined && { sentinelUsername }),
      ...optional(sentinelPassword !== undefined && sentinels !== undefined && { sentinelPassword }),
      ...optional(clusterNodes && { clusterNodes }),
      ...optional(read('AUTHGATE_REDIS_USERNAME') !== undefined && { username: read('AUTHGATE_REDIS_USERNAME')! }),
      ...optional(read('AUTHGATE_REDIS_PASSWORD') !== undefined && { password: read('AUTHGATE_REDIS_PASSWORD')! }),
      ...optional(tls && { tls }),
      prefix: read('AUTHGATE_REDIS_PREFIX') ?? 'authgate:',
      commandTimeoutMs: integer('AUTHGATE_REDIS_TIMEOUT_MS', 500, 10, 60_000),
    };
  }

  /**
   * One switch for every connection of the topology. A standalone URL already says it with its
   * scheme, so a setting that contradicts the scheme is refused rather than one of them ignored.
   * There is no way to turn certificate verification off: a private CA is trusted with the CA file.
   */
  function readRedisTls(url: string | undefined): RedisTlsConfig | undefined {
    const mode = read('AUTHGATE_REDIS_TLS');
    const caFile = read('AUTHGATE_REDIS_TLS_CA_FILE');
    const serverName = read('AUTHGATE_REDIS_TLS_SERVER_NAME');
    if (mode !== undefined && mode !== 'on' && mode !== 'off') fail('AUTHGATE_REDIS_TLS', 'must be on or off');
    const secureUrl = url !== undefined && url.startsWith('rediss://');
    if (url !== undefined && mode === 'on' && !secureUrl) fail('AUTHGATE_REDIS_TLS', 'is on but AUTHGATE_REDIS_URL is redis://: use rediss://');
    if (secureUrl && mode === 'off') fail('AUTHGATE_REDIS_TLS', 'is off but AUTHGATE_REDIS_URL is rediss://');
    const on = mode === 'on' || (mode === undefined && secureUrl);
    if (!on) {
      for (const name of ['AUTHGATE_REDIS_TLS_CA_FILE', 'AUTHGATE_REDIS_TLS_SERVER_NAME'] as const) {
        if (read(name) !== undefined) fail(name, 'needs Redis TLS: AUTHGATE_REDIS_TLS=on or a rediss:// AUTHGATE_REDIS_URL');
      }
      return undefined;
    }
    // A host name only: Node sends no SNI for an IP address, and the address is what is checked anyway.
    if (serverName !== undefined && !/^(?=.{1,253}$)(?!\d+(\.\d+){3}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(serverName)) {
      fail('AUTHGATE_REDIS_TLS_SERVER_NAME', 'must be a DNS host name');
    }
    let ca: string | undefined;
    if (caFile !== undefined) {
      try {
        ca = readFileSync(caFile, 'utf8');
      } catch {
        fail('AUTHGATE_REDIS_TLS_CA_FILE', 'cannot be read');
      }
      if (ca !== undefined && !ca.includes('-----BEGIN CERTIFICATE-----')) {
        ca = undefined;
        fail('AUTHGATE_REDIS_TLS_CA_FILE', 'holds no PEM certificate');
      }
    }
    return { ...(ca === undefined ? {} : { ca }), ...(serverName === undefined ? {} : { serverName }) };
  }

  function readTls(): Config['tls'] {
    const mode = read('AUTHGATE_TLS');
    const certFile = read('AUTHGATE_TLS_CERT_FILE');
    const keyFile = read('AUTHGATE_TLS_KEY_FILE');
    if (mode !== undefined && mode !== 'offloaded' && mode !== 'on' && mode !== 'off') fail('AUTHGATE_TLS', 'must be on, off or offloaded');
    if ((certFile === undefined) !== (keyFile === undefined)) {
      fail(certFile === undefined ? 'AUTHGATE_TLS_CERT_FILE' : 'AUTHGATE_TLS_KEY_FILE', 'must be set together with the other TLS file');
    }
    if (certFile !== undefined && keyFile !== undefined) {
      if (mode === 'off' || mode === 'offloaded') fail('AUTHGATE_TLS', 'cannot be off or offloaded while TLS files are set');
      return { mode: 'on', certFile, keyFile };
    }
    if (mode === 'on') fail('AUTHGATE_TLS_CERT_FILE', 'and AUTHGATE_TLS_KEY_FILE are required when AUTHGATE_TLS=on');
    return { mode: mode === 'offloaded' ? 'offloaded' : 'off' };
  }

  function readTrustProxy(): boolean | number | string {
    const raw = read('AUTHGATE_TRUST_PROXY');
    if (raw === undefined || raw === 'false') return false;
    if (raw === 'true') return true;
    if (/^\d+$/.test(raw)) return Number(raw);
    if (/^[0-9a-fA-F.:/,\s]+$/.test(raw) && raw.split(',').every(isAddressOrCidr)) return raw;
    fail('AUTHGATE_TRUST_PROXY', 'must be false, true, a hop count, or comma-separated addresses/CIDRs');
    return false;
  }
}

/** An address or address/prefix that proxy-addr takes (it throws at server start on anything else). */
function isAddressOrCidr(entry: string): boolean {
  const [address = '', bits, ...rest] = entry.trim().split('/');
  const kind = isIP(address);
  if (kind === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  const prefix = /^\d{1,3}$/.test(bits) ? Number(bits) : 0;
  return prefix >= 1 && prefix <= (kind === 4 ? 32 : 128);
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
