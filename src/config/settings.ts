/**
 * Every setting the gateway reads, beside its default and its documentation. This table is the
 * single source of the README's configuration table (test/config/settings.test.ts keeps them in
 * step). Values are parsed once, at start, by config/load.ts.
 */
export type SettingSpec = Readonly<{
  name: string;
  doc: string;
  /** Shown in the README; undefined where there is none or it depends on something else. */
  default?: string;
  /** Secret settings are never echoed, not even in an error about them. */
  secret?: boolean;
}>;

export const settings = [
  { name: 'NODE_ENV', doc: '`production` turns on the strict start checks; anything else is development.', default: 'development' },
  { name: 'AUTHGATE_ENVIRONMENT', doc: '`production` or `sandbox`. Keys, tokens and store records of one never work in the other.', default: '`production` under NODE_ENV=production, else `sandbox`' },
  { name: 'AUTHGATE_HOST', doc: 'Address the public API listens on.', default: '0.0.0.0' },
  { name: 'AUTHGATE_PORT', doc: 'Port of the public API.', default: '8080' },
  { name: 'AUTHGATE_OPS_HOST', doc: 'Address the ops port (metrics, health, admin API) listens on.', default: '0.0.0.0' },
  { name: 'AUTHGATE_OPS_PORT', doc: 'Port of metrics, health, the admin API and the OpenAPI document; never served on the public port.', default: '9090' },
  { name: 'AUTHGATE_JWT_SECRET', doc: 'HS256 signing secret of login tokens, at least 32 bytes. Required in production; generated per start in development.', secret: true },
  { name: 'AUTHGATE_JWT_PREVIOUS_SECRETS', doc: 'Comma-separated former signing secrets, still accepted for verification during a rotation.', secret: true },
  { name: 'AUTHGATE_JWT_ISSUER', doc: 'The `iss` of login tokens.', default: 'authgate' },
  { name: 'AUTHGATE_TOKEN_TTL_SECONDS', doc: 'Lifetime of a login token, from 1 to 86400 seconds (a token lives at least this long: `exp` is rounded up to the whole second).', default: '3600' },
  { name: 'AUTHGATE_ADMIN_TOKEN', doc: 'Bearer token of the admin API, at least 16 characters. Required in production; generated and printed once in development.', secret: true },
  { name: 'AUTHGATE_UPSTREAM_URL', doc: 'Base URL of the resource service requests are forwarded to; a path in it is put before the forwarded one (`http://svc/v1`: `/accounts` → `/v1/accounts`). Required in production; in development a bundled example upstream starts on loopback when unset.' },
  { name: 'AUTHGATE_UPSTREAM_TIMEOUT_MS', doc: 'How long the upstream may take to answer before the client gets 504.', default: '10000' },
  { name: 'AUTHGATE_STORE', doc: '`memory` (embedded, one process) or `redis`. Production refuses to start on memory unless this says so.', default: '`redis` when a Redis setting is present, else `memory`' },
  { name: 'AUTHGATE_REDIS_URL', doc: '`redis://` or `rediss://` URL of a standalone Redis; user and password may be in the URL.', secret: true },
  { name: 'AUTHGATE_REDIS_SENTINELS', doc: 'Sentinels as `host:port,host:port`; with AUTHGATE_REDIS_SENTINEL_NAME.' },
  { name: 'AUTHGATE_REDIS_SENTINEL_NAME', doc: 'Name of the master the sentinels watch.', default: 'mymaster' },
  { name: 'AUTHGATE_REDIS_SENTINEL_USERNAME', doc: 'ACL user on the Sentinels themselves; with AUTHGATE_REDIS_SENTINEL_PASSWORD.' },
  { name: 'AUTHGATE_REDIS_SENTINEL_PASSWORD', doc: 'Password of the Sentinels themselves (their `requirepass`), apart from the data nodes\' AUTHGATE_REDIS_PASSWORD.', secret: true },
  { name: 'AUTHGATE_REDIS_CLUSTER_NODES', doc: 'Redis Cluster seed nodes as `host:port,host:port`.' },
  { name: 'AUTHGATE_REDIS_USERNAME', doc: 'Redis ACL user, where not in the URL.' },
  { name: 'AUTHGATE_REDIS_PASSWORD', doc: 'Redis password, where not in the URL (Sentinel and Cluster).', secret: true },
  { name: 'AUTHGATE_REDIS_TLS', doc: '`on`: every Redis connection uses TLS (Sentinels and the master behind them; every Cluster node), certificates always verified. A standalone URL says it with `rediss://`.', default: '`on` with a `rediss://` URL, else `off`' },
  { name: 'AUTHGATE_REDIS_TLS_CA_FILE', doc: 'PEM CA bundle that Redis certificates must chain to, trusted instead of the built-in CAs (a private CA). Read at start.' },
  { name: 'AUTHGATE_REDIS_TLS_SERVER_NAME', doc: 'Host name Redis certificates are checked against (and sent as SNI) instead of the address connected to: Sentinel and Cluster hand out IP addresses.' },
  { name: 'AUTHGATE_REDIS_PREFIX', doc: 'Prefix of every Redis key; the environment is added after it.', default: 'authgate:' },
  { name: 'AUTHGATE_REDIS_TIMEOUT_MS', doc: 'Timeout of each Redis command; past it the request gets 503.', default: '500' },
  { name: 'AUTHGATE_CACHE_MAX', doc: 'Most credentials kept in the in-process cache.', default: '100000' },
  { name: 'AUTHGATE_CACHE_TTL_SECONDS', doc: 'How long a resolved credential is trusted from the cache (while the revocation channel is confirmed), and the most a cached credential is served while Redis does not answer.', default: '60' },
  { name: 'AUTHGATE_NEGATIVE_CACHE_TTL_SECONDS', doc: 'How long an unknown credential is remembered as unknown.', default: '5' },
  { name: 'AUTHGATE_TRUST_PROXY', doc: 'Which hops\' X-Forwarded-For (and -Proto, -Host) to believe: `false`, `true`, a hop count (the nearest N proxies), or comma-separated addresses/CIDRs. Either way the upstream gets the gateway\'s own X-Forwarded-* (see Forwarding).', default: 'false' },
  { name: 'AUTHGATE_TLS', doc: '`on` (set by the two files below), `offloaded` (an ingress terminates TLS; silences the production warning) or `off`.', default: '`on` when the files are set, else `off`' },
  { name: 'AUTHGATE_TLS_CERT_FILE', doc: 'PEM certificate chain; with AUTHGATE_TLS_KEY_FILE the public port serves HTTPS (TLS 1.2+), reloading both when they change.' },
  { name: 'AUTHGATE_TLS_KEY_FILE', doc: 'PEM private key of the certificate.', secret: true },
  { name: 'AUTHGATE_SHUTDOWN_DELAY_SECONDS', doc: 'After SIGTERM, readiness fails at once and listeners stay open this long so load balancers notice.', default: '5 (0 outside production)' },
  { name: 'AUTHGATE_SHUTDOWN_GRACE_SECONDS', doc: 'How long in-flight requests may take to finish after the listeners close.', default: '25' },
  { name: 'AUTHGATE_SHED_EVENT_LOOP_DELAY_MS', doc: 'Load shedding: when the mean event-loop delay is above this in two 250 ms windows in a row, new requests get 503 with Retry-After; 0 turns it off.', default: '1000' },
  { name: 'AUTHGATE_SHED_EVENT_LOOP_UTILIZATION_PERCENT', doc: 'Load shedding: when the event-loop utilization is above this in two 250 ms windows in a row, new requests get 503; 0 turns it off.', default: '0 (off)' },
  { name: 'LOG_LEVEL', doc: 'pino level: fatal, error, warn, info, debug, trace or silent.', default: 'info' },
] as const satisfies readonly SettingSpec[];

export type SettingName = (typeof settings)[number]['name'];
