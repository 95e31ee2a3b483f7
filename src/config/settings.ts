/**
 * Every setting the gateway reads, as one typed table: its name, its kind (which carries the
 * accepted range), its default, whether it is a secret, and one line of documentation.
 * config/load.ts parses and range-checks each value by its kind from this table; the README's
 * configuration table and `authgate config` are rendered from it (config/settings-doc.ts).
 */
import type { HostPort } from './config.js';

/** What a value may be. Load.ts has one parser per kind; settings-doc.ts one description. */
export type SettingKind =
  | Readonly<{ kind: 'text'; minLength?: number; unit?: 'bytes' | 'characters' }>
  /** Comma-separated; each entry at least `minLength` (in `unit`). */
  | Readonly<{ kind: 'text-list'; minLength: number; unit: 'bytes' | 'characters' }>
  | Readonly<{ kind: 'integer'; min: number; max: number }>
  | Readonly<{ kind: 'enum'; values: readonly string[] }>
  /** An http:// or https:// base URL; a path is kept, a query or fragment refused. */
  | Readonly<{ kind: 'http-url' }>
  | Readonly<{ kind: 'redis-url' }>
  | Readonly<{ kind: 'host-port-list' }>
  | Readonly<{ kind: 'file' }>
  | Readonly<{ kind: 'dns-name' }>
  /** false, true, a hop count, or comma-separated addresses/CIDRs (proxy-addr's grammar). */
  | Readonly<{ kind: 'trust-proxy' }>
  /** Comma-separated addresses/CIDRs, or proxy-addr's names `loopback`, `linklocal`, `uniquelocal`. */
  | Readonly<{ kind: 'address-list' }>
  /** `off`, or `<count>/<window>` normalized to `<count>/<seconds>s` (limits/rate-limit.ts). */
  | Readonly<{ kind: 'rate-limit' }>;

/** The parsed value of a setting of kind K. */
export type KindValue<K extends SettingKind> = K extends { kind: 'integer' }
  ? number
  : K extends { kind: 'enum'; values: readonly (infer V)[] }
    ? V
    : K extends { kind: 'text-list' } | { kind: 'address-list' }
      ? readonly string[]
      : K extends { kind: 'host-port-list' }
        ? readonly HostPort[]
        : K extends { kind: 'trust-proxy' }
          ? boolean | number | string
          : string;

export type SettingSpec = Readonly<{
  name: string;
  type: SettingKind;
  doc: string;
  /** Used when the setting is unset (or blank); under NODE_ENV=production, `productionDefault` if given. */
  default?: string | number | boolean;
  productionDefault?: string | number;
  /** How the default reads where it is decided by other settings (load.ts decides it in code). */
  defaultDoc?: string;
  /** Secret settings are never echoed, not even in an error about them, nor by `authgate config`. */
  secret?: boolean;
}>;

const port = { kind: 'integer', min: 0, max: 65_535 } as const;

export const settings = [
  { name: 'NODE_ENV', type: { kind: 'text' }, default: 'development', doc: '`production` turns on the strict start checks; anything else is development.' },
  { name: 'AUTHGATE_ENVIRONMENT', type: { kind: 'enum', values: ['production', 'sandbox'] }, default: 'sandbox', productionDefault: 'production', doc: '`production` or `sandbox`. Keys, tokens and store records of one never work in the other.' },
  { name: 'AUTHGATE_HOST', type: { kind: 'text' }, default: '0.0.0.0', doc: 'Address the public API listens on.' },
  { name: 'AUTHGATE_PORT', type: port, default: 8080, doc: 'Port of the public API.' },
  { name: 'AUTHGATE_OPS_HOST', type: { kind: 'text' }, default: '0.0.0.0', doc: 'Address the ops port (metrics, health, admin API) listens on.' },
  { name: 'AUTHGATE_OPS_PORT', type: port, default: 9090, doc: 'Port of metrics, health, the admin API and the OpenAPI document; never served on the public port.' },
  { name: 'AUTHGATE_JWT_SECRET', type: { kind: 'text', minLength: 32, unit: 'bytes' }, secret: true, doc: 'HS256 signing secret of login tokens, at least 32 bytes. Required in production; generated per start in development.' },
  { name: 'AUTHGATE_JWT_PREVIOUS_SECRETS', type: { kind: 'text-list', minLength: 32, unit: 'bytes' }, secret: true, doc: 'Comma-separated former signing secrets, still accepted for verification during a rotation.' },
  { name: 'AUTHGATE_JWT_ISSUER', type: { kind: 'text' }, default: 'authgate', doc: 'The `iss` of login tokens.' },
  { name: 'AUTHGATE_TOKEN_TTL_SECONDS', type: { kind: 'integer', min: 1, max: 86_400 }, default: 3600, doc: 'Lifetime of a login token, from 1 to 86400 seconds (`exp` − `iat` is exactly this; both are the issue time rounded up to the whole second, so a token lives at least this long).' },
  { name: 'AUTHGATE_IDENTITY_ASSERTION', type: { kind: 'enum', values: ['on', 'off'] }, default: 'on', doc: '`on`: every forwarded request carries `x-authgate-identity`, a short-lived JWT the gateway signs (the organization, its name and e-mail, the credential and its scopes), verifiable with the JWKS. `off`: not sent, and no signing key needed.' },
  { name: 'AUTHGATE_IDENTITY_KEY_FILE', type: { kind: 'file' }, secret: true, doc: 'The private key that signs identity assertions: PEM (PKCS#8, or SEC1 for EC) or a private JWK, P-256 (ES256) or Ed25519 (EdDSA). Required in production while the assertion is on; generated per start in development. Read at start.' },
  { name: 'AUTHGATE_IDENTITY_PUBLISHED_KEY_FILES', type: { kind: 'text-list', minLength: 1, unit: 'characters' }, doc: 'Comma-separated files of further public (or private: only the public part is used) keys, PEM or JWK, published in the JWKS beside the signing key: the next key before a rotation, the previous one after it.' },
  { name: 'AUTHGATE_IDENTITY_AUDIENCE', type: { kind: 'text' }, defaultDoc: 'the origin of AUTHGATE_UPSTREAM_URL', doc: 'The `aud` of identity assertions: what the upstream checks them against.' },
  { name: 'AUTHGATE_IDENTITY_TTL_SECONDS', type: { kind: 'integer', min: 10, max: 3600 }, default: 60, doc: 'Lifetime of an identity assertion (`exp` − `iat`); the gateway re-signs one per credential once half of it has passed.' },
  { name: 'AUTHGATE_IDENTITY_JWKS_ON_PUBLIC_PORT', type: { kind: 'enum', values: ['on', 'off'] }, default: 'on', doc: '`on` also serves the JWKS (`/.well-known/jwks.json`) on the public port, where upstreams can fetch it without reaching the ops port and its admin API; it is always on the ops port. Public keys only. `off`: the ops port only.' },
  { name: 'AUTHGATE_ADMIN_TOKEN', type: { kind: 'text', minLength: 16, unit: 'characters' }, secret: true, doc: 'Bearer token of the admin API, at least 16 characters. Required in production; generated and printed once in development.' },
  { name: 'AUTHGATE_UPSTREAM_URL', type: { kind: 'http-url' }, doc: 'Base URL of the resource service requests are forwarded to; a path in it is put before the forwarded one (`http://svc/v1`: `/accounts` → `/v1/accounts`). Required in production; in development a bundled example upstream starts on loopback when unset.' },
  { name: 'AUTHGATE_UPSTREAM_TIMEOUT_MS', type: { kind: 'integer', min: 1, max: 600_000 }, default: 10_000, doc: 'How long the upstream may take to answer before the client gets 504.' },
  { name: 'AUTHGATE_ROUTES_FILE', type: { kind: 'file' }, defaultDoc: 'the built-in table: `/accounts` and `/organization/me` to AUTHGATE_UPSTREAM_URL', doc: 'The routes file (YAML or JSON; docs/routes.md): the routes forwarded, the upstreams behind them and the scopes that guard them. Checked at start (every error with its line), and by `authgate routes check`.' },
  { name: 'AUTHGATE_STORE', type: { kind: 'enum', values: ['memory', 'redis'] }, defaultDoc: '`redis` when a Redis setting is present, else `memory`', doc: '`memory` (embedded, one process) or `redis`. Production refuses to start on memory unless this says so.' },
  { name: 'AUTHGATE_REDIS_URL', type: { kind: 'redis-url' }, secret: true, doc: '`redis://` or `rediss://` URL of a standalone Redis; user and password may be in the URL.' },
  { name: 'AUTHGATE_REDIS_SENTINELS', type: { kind: 'host-port-list' }, doc: 'Sentinels as `host:port,host:port`; with AUTHGATE_REDIS_SENTINEL_NAME.' },
  { name: 'AUTHGATE_REDIS_SENTINEL_NAME', type: { kind: 'text' }, default: 'mymaster', doc: 'Name of the master the sentinels watch.' },
  { name: 'AUTHGATE_REDIS_SENTINEL_USERNAME', type: { kind: 'text' }, doc: 'ACL user on the Sentinels themselves; with AUTHGATE_REDIS_SENTINEL_PASSWORD.' },
  { name: 'AUTHGATE_REDIS_SENTINEL_PASSWORD', type: { kind: 'text' }, secret: true, doc: 'Password of the Sentinels themselves (their `requirepass`), apart from the data nodes\' AUTHGATE_REDIS_PASSWORD.' },
  { name: 'AUTHGATE_REDIS_CLUSTER_NODES', type: { kind: 'host-port-list' }, doc: 'Redis Cluster seed nodes as `host:port,host:port`.' },
  { name: 'AUTHGATE_REDIS_USERNAME', type: { kind: 'text' }, doc: 'Redis ACL user, where not in the URL.' },
  { name: 'AUTHGATE_REDIS_PASSWORD', type: { kind: 'text' }, secret: true, doc: 'Redis password, where not in the URL (Sentinel and Cluster).' },
  { name: 'AUTHGATE_REDIS_TLS', type: { kind: 'enum', values: ['on', 'off'] }, defaultDoc: '`on` with a `rediss://` URL, else `off`', doc: '`on`: every Redis connection uses TLS (Sentinels and the master behind them; every Cluster node), certificates always verified. A standalone URL says it with `rediss://`.' },
  { name: 'AUTHGATE_REDIS_TLS_CA_FILE', type: { kind: 'file' }, doc: 'PEM CA bundle that Redis certificates must chain to, trusted instead of the built-in CAs (a private CA). Read at start.' },
  { name: 'AUTHGATE_REDIS_TLS_SERVER_NAME', type: { kind: 'dns-name' }, doc: 'Host name Redis certificates are checked against (and sent as SNI) instead of the address connected to: Sentinel and Cluster hand out IP addresses.' },
  { name: 'AUTHGATE_REDIS_PREFIX', type: { kind: 'text' }, default: 'authgate:', doc: 'Prefix of every Redis key; the environment is added after it.' },
  { name: 'AUTHGATE_REDIS_WAIT_REPLICAS', type: { kind: 'integer', min: 0, max: 16 }, default: 0, doc: 'Replicas that must acknowledge a write creating or changing a credential (Redis `WAIT`, for up to half of AUTHGATE_REDIS_TIMEOUT_MS) before it is answered; fewer: 503 (1511), and the write may stand. 0: answered once the master has it.' },
  { name: 'AUTHGATE_REDIS_TIMEOUT_MS', type: { kind: 'integer', min: 10, max: 60_000 }, default: 500, doc: 'Timeout of each Redis command; past it the request gets 503.' },
  { name: 'AUTHGATE_CACHE_MAX', type: { kind: 'integer', min: 0, max: 10_000_000 }, default: 100_000, doc: 'Most credentials kept in the in-process cache.' },
  { name: 'AUTHGATE_CACHE_TTL_SECONDS', type: { kind: 'integer', min: 0, max: 3600 }, default: 60, doc: 'How long a resolved credential is trusted from the cache (while the revocation channel is confirmed), and the most a cached credential is served while Redis does not answer.' },
  { name: 'AUTHGATE_NEGATIVE_CACHE_TTL_SECONDS', type: { kind: 'integer', min: 0, max: 300 }, default: 5, doc: 'How long an unknown credential is remembered as unknown.' },
  { name: 'AUTHGATE_NEGATIVE_CACHE_MAX', type: { kind: 'integer', min: 0, max: 16_777_216 }, default: 65_536, doc: 'Most unknown credentials remembered as unknown at once (16 bytes each, in a table of the next power of two at or above it, allocated at start; its pages take memory as they are written). A flood of garbage keys beyond it makes more store reads, never more memory; 0 remembers none.' },
  { name: 'AUTHGATE_TRUST_PROXY', type: { kind: 'trust-proxy' }, default: false, doc: 'Which hops\' X-Forwarded-For (and -Proto, -Host) to believe: `false`, `true`, a hop count (the nearest N proxies), or comma-separated addresses/CIDRs. Either way the upstream gets the gateway\'s own X-Forwarded-* (see Forwarding).' },
  { name: 'AUTHGATE_TLS', type: { kind: 'enum', values: ['on', 'off', 'offloaded'] }, defaultDoc: '`on` when the files are set, else `off`', doc: '`on` (set by the two files below), `offloaded` (an ingress terminates TLS; silences the production warning) or `off`.' },
  { name: 'AUTHGATE_TLS_CERT_FILE', type: { kind: 'file' }, doc: 'PEM certificate chain; with AUTHGATE_TLS_KEY_FILE the public port serves HTTPS (TLS 1.2+), reloading both when they change.' },
  { name: 'AUTHGATE_TLS_KEY_FILE', type: { kind: 'file' }, secret: true, doc: 'PEM private key of the certificate.' },
  { name: 'AUTHGATE_SHUTDOWN_DELAY_SECONDS', type: { kind: 'integer', min: 0, max: 300 }, default: 0, productionDefault: 5, doc: 'After SIGTERM, readiness fails at once and listeners stay open this long so load balancers notice.' },
  { name: 'AUTHGATE_SHUTDOWN_GRACE_SECONDS', type: { kind: 'integer', min: 0, max: 3600 }, default: 25, doc: 'How long in-flight requests may take to finish after the listeners close.' },
  { name: 'AUTHGATE_SHED_EVENT_LOOP_DELAY_MS', type: { kind: 'integer', min: 0, max: 60_000 }, default: 1000, doc: 'Load shedding: when the mean event-loop delay is above this in two 250 ms windows in a row, new requests get 503 with Retry-After; 0 turns it off.' },
  { name: 'AUTHGATE_SHED_EVENT_LOOP_UTILIZATION_PERCENT', type: { kind: 'integer', min: 0, max: 100 }, default: 0, doc: 'Load shedding: when the event-loop utilization is above this in two 250 ms windows in a row, new requests get 503; 0 turns it off.' },
  { name: 'AUTHGATE_AUDIT_MAX_EVENTS', type: { kind: 'integer', min: 1000, max: 10_000_000 }, default: 100_000, doc: 'Each organization\'s audit trail keeps at most this many of its newest security events, whatever other organizations do (the events of no organization, e.g. failed logins of unknown e-mails, are bounded apart by the same number).' },
  { name: 'AUTHGATE_AUDIT_MAX_AGE_DAYS', type: { kind: 'integer', min: 1, max: 3650 }, default: 90, doc: 'Each organization\'s audit trail forgets its events older than this many days (and a trail nobody adds to goes as a whole).' },
  { name: 'AUTHGATE_MAX_KEYS_PER_ORGANIZATION', type: { kind: 'integer', min: 1, max: 1_000_000 }, default: 1000, doc: 'The most API keys one organization may hold (expired ones count until deleted or pruned); creating one more is 409 (code 1305). The admin API sets an organization\'s own (`keyLimit`).' },
  { name: 'AUTHGATE_KEY_CREATION_RATE_LIMIT', type: { kind: 'rate-limit' }, default: '60/60s', doc: 'How many API keys one organization may create (and roll) per window, counted across all replicas: `off`, or e.g. `60/60s`; beyond it 429 (code 1111) with Retry-After.' },
  { name: 'AUTHGATE_MAX_SESSIONS_PER_ORGANIZATION', type: { kind: 'integer', min: 1, max: 1_000_000 }, default: 1000, doc: 'The most live login sessions one organization may have; a login beyond it is 409 (code 1306) until a session ends or expires.' },
  { name: 'AUTHGATE_SESSION_CREATION_RATE_LIMIT', type: { kind: 'rate-limit' }, default: '60/60s', doc: 'How many logins (new sessions) one organization may make per window, counted across all replicas: `off`, or e.g. `60/60s`; beyond it 429 (code 1112) with Retry-After.' },
  { name: 'AUTHGATE_RATE_LIMIT', type: { kind: 'rate-limit' }, default: 'off', doc: 'The default rate limit of each credential (API key or login session) on forwarded routes, counted across all replicas: `off`, or e.g. `600/60s` (also `m`, `h`). The admin API sets an organization\'s own (or `off` for none), and a key may carry a lower one.' },
  { name: 'AUTHGATE_PASSWORD_MIN_LENGTH', type: { kind: 'integer', min: 8, max: 128 }, default: 15, doc: 'The fewest characters (Unicode code points) a password being set must have: 15 is NIST SP 800-63B-4\'s figure for a password used alone, 8 its floor (a lower value stops the start). At most 128 characters either way; no composition rules, and common or breached passwords and ones holding the organization\'s name or e-mail local part are refused (docs/security.md, "Password policy"). Logins never apply it: existing passwords keep working.' },
  { name: 'AUTHGATE_PASSWORD_RESET_TTL_SECONDS', type: { kind: 'integer', min: 60, max: 604800 }, default: 86400, doc: 'How long a password-reset token made by the admin API (POST /admin/organizations/{id}/password-reset, or an organization created without a password) can be used: once, by POST /auth/password/reset, within this many seconds (default 24 hours; at most 7 days).' },
  { name: 'AUTHGATE_NOTIFY_WEBHOOK_URL', type: { kind: 'http-url' }, doc: 'Where the gateway POSTs a signed JSON notice of each security change of an organization (password changed, reset or reset issued, name or e-mail changed, a key reported leaked), so the operator can tell the organization out of band (docs/operations-notices.md, "Security notices"). Off when unset. Sent off the request path, retried with backoff; user and password in the URL are sent as Basic auth and never logged.' },
  { name: 'AUTHGATE_NOTIFY_WEBHOOK_SECRET', type: { kind: 'text', minLength: 32, unit: 'bytes' }, secret: true, doc: 'HMAC-SHA256 key of the notices\' `X-Authgate-Signature`, at least 32 bytes; required with AUTHGATE_NOTIFY_WEBHOOK_URL, and a value shipped in the repository\'s examples is refused.' },
  { name: 'AUTHGATE_MFA_ENCRYPTION_KEY', type: { kind: 'text', minLength: 32, unit: 'bytes' }, secret: true, doc: 'The key TOTP secrets are sealed with at rest (AES-256-GCM, keyed by SHA-256 of this text), at least 32 bytes. Generated per start in development (enrolments then die with the process); in production, without it the gateway starts but refuses TOTP enrolment (409, code 1228). Rotation: set the new key here and the old one in AUTHGATE_MFA_PREVIOUS_ENCRYPTION_KEYS (docs/security.md).' },
  { name: 'AUTHGATE_MFA_FAILURE_LIMIT', type: { kind: 'integer', min: 1, max: 100 }, default: 100, doc: 'Wrong second-factor proofs (codes, recovery codes, passkey assertions) one organization (or one member, for its own second factor) may make in a row, on every replica and address together; then every proof, a right one too, is refused (429, code 1121) until 24 hours after the first, and a right proof resets the count. At most 100 (NIST SP 800-63B); lower it to lock sooner (docs/security.md).' },
  { name: 'AUTHGATE_MFA_PREVIOUS_ENCRYPTION_KEYS', type: { kind: 'text-list', minLength: 32, unit: 'bytes' }, secret: true, doc: 'Comma-separated former AUTHGATE_MFA_ENCRYPTION_KEY values: secrets sealed under them still open; new enrolments use the current key.' },
  { name: 'AUTHGATE_WEBAUTHN_RP_ID', type: { kind: 'dns-name' }, defaultDoc: '`localhost` outside production; none in production', doc: 'The WebAuthn relying-party ID passkeys are registered to: the domain of the pages that run the ceremony (the console\'s), e.g. `example.com`. A passkey works only under the RP ID it was registered with: changing it later makes every registered passkey useless. In production passkeys are offered only when this and AUTHGATE_WEBAUTHN_ORIGINS are both set (else registration answers 409, code 1231).' },
  { name: 'AUTHGATE_WEBAUTHN_ORIGINS', type: { kind: 'text-list', minLength: 1, unit: 'characters' }, defaultDoc: '`http://localhost:<AUTHGATE_PORT>` outside production; none in production', doc: 'Comma-separated exact origins (`https://console.example.com`) a passkey registration or login may come from, each on the domain of AUTHGATE_WEBAUTHN_RP_ID; any other origin is refused.' },
  { name: 'AUTHGATE_CONSOLE', type: { kind: 'enum', values: ['on', 'off'] }, default: 'on', productionDefault: 'off', doc: '`on` serves the self-service console (sign in, keys, sessions, audit) under `/console/` on the public port; on in development, off in production unless set.' },
  { name: 'AUTHGATE_CORS_ORIGINS', type: { kind: 'text-list', minLength: 1, unit: 'characters' }, doc: 'Comma-separated origins (`https://app.example.com`) whose browser apps may call the public API, or `*` for any; none by default. Preflights are answered by the gateway without a credential and never forwarded; credentials (cookies) are never allowed.' },
  { name: 'AUTHGATE_TRACING', type: { kind: 'enum', values: ['on', 'off'] }, default: 'off', doc: '`on`: OpenTelemetry tracing (docs/operations-observability.md, "Tracing"): a server span per request on the public port, child spans (store read, argon2, rate-limit lease, identity signing) and the upstream call as a client span whose context goes upstream in `traceparent`, exported over OTLP/HTTP (protobuf) in batches. The standard `OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER` (default `parentbased_traceidratio`) and `OTEL_TRACES_SAMPLER_ARG` (default 1) are honoured. `off`: the SDK is not even loaded; a client\'s `traceparent` still goes upstream unchanged and its ids still go in the log lines.' },
  { name: 'AUTHGATE_TRACING_ORG_ID', type: { kind: 'enum', values: ['on', 'off'] }, default: 'off', doc: '`on` records the organization id on each request\'s span (`authgate.organization.id`). Never recorded, either way: a credential, a key id, an e-mail, an organization name or the query string.' },
  // The edge proxies' authorization port (issue 30; docs/edge-authz.md).
  { name: 'AUTHGATE_AUTHZ_PORT', type: port, doc: 'Port of the authorization endpoints for an edge proxy (nginx `auth_request`, Traefik and Caddy forward-auth, Envoy `ext_authz` over HTTP): off unless set. Never the public port: a client must not reach it directly.' },
  { name: 'AUTHGATE_AUTHZ_HOST', type: { kind: 'text' }, default: '0.0.0.0', doc: 'Address the authorization port listens on (as the other ports; AUTHGATE_AUTHZ_TRUSTED_PROXIES decides who is answered).' },
  { name: 'AUTHGATE_AUTHZ_TRUSTED_PROXIES', type: { kind: 'address-list' }, defaultDoc: '`loopback`', doc: 'The proxies whose requests the authorization port decides (and whose X-Forwarded-For, X-Real-IP and original-request headers it believes): comma-separated addresses/CIDRs, or `loopback`, `linklocal`, `uniquelocal`. Any other peer gets 403 (code 1114) without a decision.' },
  { name: 'AUTHGATE_AUTHZ_CACHE_SECONDS', type: { kind: 'integer', min: 0, max: 5 }, default: 0, doc: 'How long an edge proxy may keep an allow of the authorization port (`Cache-Control: max-age=N` and `X-Accel-Expires: N`); 0 sends `no-store`. A revoked credential can pass a caching proxy for up to this long, beyond the usual revocation bound. Refusals, and allows under a rate limit, are never cacheable.' },
  { name: 'AUTHGATE_AUTHZ_SPEED_TRICKS_OFF', type: { kind: 'text-list', minLength: 1, unit: 'characters' }, doc: 'For diagnosis and measurement, not for production: comma-separated speed tricks of the authorization port to turn off, or `all`: `kept-allows` (a credential\'s allow kept while nothing it depends on changes), `header-blocks` (a kept allow\'s answer and header bytes rendered once), `fast-front` (simple requests answered without node\'s HTTP machinery). The answers are the same either way; each trick only costs CPU when off (src/edge-authz/speed-tricks.ts, docs/edge-authz.md). None off by default.' },
  // Envoy ext_authz over gRPC (issue 30; docs/edge-authz.md): host and trusted proxies are the authorization port's.
  { name: 'AUTHGATE_AUTHZ_GRPC_PORT', type: port, doc: 'Port of Envoy `ext_authz` over gRPC (`envoy.service.auth.v3.Authorization/Check`, plaintext HTTP/2; Istio `envoyExtAuthzGrpc`, Envoy Gateway `extAuth.grpc`): off unless set. Listens on AUTHGATE_AUTHZ_HOST and answers only AUTHGATE_AUTHZ_TRUSTED_PROXIES; never the public port.' },
  { name: 'AUTHGATE_AUTHZ_REMOVE_CREDENTIAL', type: { kind: 'enum', values: ['on', 'off'] }, default: 'on', doc: '`on`: an allow over gRPC also tells Envoy to remove `authorization` from the request it forwards (`headers_to_remove`), as authgate\'s own proxy never forwards the credential: the upstream trusts the identity headers instead. `off`: the upstream receives the client\'s Authorization as sent.' },
  { name: 'LOG_LEVEL', type: { kind: 'enum', values: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] }, default: 'info', doc: 'pino level: fatal, error, warn, info, debug, trace or silent.' },
] as const satisfies readonly SettingSpec[];

export type Setting = (typeof settings)[number];
export type SettingName = Setting['name'];
export type SpecOf<N extends SettingName> = Extract<Setting, { name: N }>;
export type SettingValue<N extends SettingName> = KindValue<SpecOf<N>['type']>;

const byName = new Map<string, Setting>(settings.map((s) => [s.name, s]));

export function settingSpec<N extends SettingName>(name: N): SpecOf<N> {
  return byName.get(name) as SpecOf<N>;
}

/** Read by the CLI (`authgate`), not the gateway: set beside the gateway's own, never a mistake. */
const CLI_SETTINGS = new Set(['AUTHGATE_ADMIN_URL']);

/**
 * The AUTHGATE_* names in env that are no setting (a misspelling such as AUTHGATE_JWT_TTL_SECONDS):
 * the gateway ignores them, so it says so at start rather than run on a default in silence.
 */
export function unknownSettings(env: Readonly<Record<string, string | undefined>>): string[] {
  return Object.keys(env)
    .filter((name) => name.startsWith('AUTHGATE_') && !byName.has(name) && !CLI_SETTINGS.has(name))
    .sort();
}
