/** The gateway's configuration after config/load.ts has checked it: plain, typed, frozen. */
import type { RateLimit } from '../limits/rate-limit.js';
import type { RoutesFile } from '../route-table/types.js';
import type { SpeedTricks } from '../edge-authz/speed-tricks.js';

export type Environment = 'production' | 'sandbox';

export type HostPort = Readonly<{ host: string; port: number }>;

/**
 * TLS towards Redis, on every connection of the topology (Sentinels, master, cluster nodes).
 * Certificates are always verified; these only say what to verify against.
 */
export type RedisTlsConfig = Readonly<{
  /** PEM CA bundle trusted instead of Node's built-in CAs (read from the file at start). */
  ca?: string;
  /** The name certificates must carry, where nodes are reached by addresses they do not name. */
  serverName?: string;
}>;

/** Where Redis is and how to reach it: exactly one of url, sentinels (with sentinelName) or clusterNodes. */
export type RedisConnectionConfig = Readonly<{
  /** Standalone: redis://[user:password@]host:port[/db], or rediss:// for TLS. */
  url?: string;
  sentinels?: readonly HostPort[];
  sentinelName?: string;
  /** The Sentinels' own credentials (requirepass / ACL user on the Sentinels). */
  sentinelUsername?: string;
  sentinelPassword?: string;
  clusterNodes?: readonly HostPort[];
  username?: string;
  password?: string;
  /**
   * Present: TLS on every connection (AUTHGATE_REDIS_TLS=on, or a rediss:// URL): to the
   * Sentinels and the master they name, to every Cluster node. Certificates are always verified.
   */
  tls?: RedisTlsConfig;
  /** How long a store method may take before it throws StoreUnavailable. */
  commandTimeoutMs: number;
}>;

export type RedisStoreConfig = Readonly<{
  kind: 'redis';
  prefix: string;
  /** AUTHGATE_REDIS_WAIT_REPLICAS: replicas that must acknowledge a credential write (0: none). */
  waitReplicas: number;
}> & RedisConnectionConfig;

export type StoreConfig = Readonly<{ kind: 'memory' }> | RedisStoreConfig;

export type Config = Readonly<{
  production: boolean;
  environment: Environment;
  publicListener: HostPort;
  opsListener: HostPort;
  jwt: Readonly<{
    secret: string;
    previousSecrets: readonly string[];
    issuer: string;
    ttlSeconds: number;
    /** True when no secret was configured and one was made up for this process (development). */
    generated: boolean;
  }>;
  admin: Readonly<{ token: string; generated: boolean }>;
  /**
   * The signed identity sent upstream (identity/): off, or on with its keys as read from their
   * files (PEM or JWK text; checked by load.ts, parsed by identity/signing-keys.ts).
   */
  identity:
    | Readonly<{ mode: 'off' }>
    | Readonly<{
        mode: 'on';
        /** The private key that signs; undefined: generated per start (development only). */
        signingKey: string | undefined;
        /** Further keys published in the JWKS (the next one, the previous one). */
        publishedKeys: readonly string[];
        /** undefined: the upstream's origin. */
        audience: string | undefined;
        ttlSeconds: number;
        jwksOnPublicPort: boolean;
      }>;
  upstream: Readonly<{
    /** undefined: development without an upstream; main.ts starts the bundled example. */
    url: string | undefined;
    timeoutMs: number;
  }>;
  store: StoreConfig;
  cache: Readonly<{ max: number; ttlSeconds: number; negativeTtlSeconds: number; negativeMax: number }>;
  trustProxy: boolean | number | string;
  /**
   * 'on': the gateway terminates TLS itself with these files (reloaded when they change);
   * 'offloaded': an ingress does it; 'off': plain HTTP (warned about in production).
   */
  tls: Readonly<{ mode: 'on'; certFile: string; keyFile: string }> | Readonly<{ mode: 'off' | 'offloaded' }>;
  shutdown: Readonly<{ delaySeconds: number; graceSeconds: number }>;
  shedding: Readonly<{ maxEventLoopDelayMs: number; maxEventLoopUtilization: number }>;
  log: Readonly<{ level: string }>;
  /** How much of the audit trail the store keeps (store/audit.ts). */
  audit: Readonly<{ maxEvents: number; maxAgeMs: number }>;
  /** What bounds one organization's growth (issue 26): keys and sessions held, and made per window. */
  tenantLimits: Readonly<{ maxKeys: number; keyCreation: RateLimit | undefined; maxSessions: number; sessionCreation: RateLimit | undefined }>;
  /** The password policy's minimum, and how long an operator's reset token lasts (issue 31). */
  passwords: Readonly<{ minLength: number; resetTtlSeconds: number }>;
  /**
   * The security notices' webhook (notices/, issue 31): where signed notices of credential changes
   * are POSTed; undefined: none are sent.
   */
  notices: Readonly<{ webhookUrl: string; secret: string }> | undefined;
  /** TOTP secrets' sealing key (credentials/mfa-secrets.ts); undefined in production when unset (no enrolment). */
  mfa: Readonly<{ encryptionKey: string | undefined; previousKeys: readonly string[]; generated: boolean; failureLimit: number }>;
  /** The self-service console under /console/ (console/). */
  console: Readonly<{ enabled: boolean }>;
  /** The passkeys' relying party (config/webauthn.ts); undefined in production unless both are set. */
  webauthn: Readonly<{ rpId: string; origins: readonly string[] }> | undefined;
  /** Origins whose browser apps may call the public API (request/cors.ts): none, a list, or any ('*'). */
  cors: Readonly<{ origins: readonly string[] | '*' }>;
  /** OpenTelemetry (tracing/): off, or on, with the organization id on spans or not. */
  tracing: Readonly<{ enabled: boolean; recordOrgId: boolean }>;
  /**
   * The edge proxies' authorization port (edge-authz/, issue 30): port undefined: off. The
   * trusted proxies are proxy-addr's entries; cacheSeconds bounds how long a proxy may keep an allow.
   */
  authz: Readonly<{ port: number | undefined; host: string; trustedProxies: readonly string[]; cacheSeconds: number }>;
  /** Which of the authorization port's speed tricks are on (edge-authz/speed-tricks.ts): all unless AUTHGATE_AUTHZ_SPEED_TRICKS_OFF names them. */
  authzSpeedTricks: SpeedTricks;
  /** Envoy ext_authz over gRPC (edge-authz/grpc/, issue 30): port undefined: off; on authz.host, for authz.trustedProxies. */
  authzGrpc: Readonly<{ port: number | undefined; removeCredential: boolean }>;
  /** Each credential's limit on forwarded routes unless its organization or key says otherwise; undefined: none. */
  rateLimit: Readonly<{ default: RateLimit | undefined }>;
  /**
   * AUTHGATE_ROUTES_FILE as read and checked at start (route-table/load.ts: schema and compiler):
   * the gateway's first route table; undefined: the built-in one (route-table/builtin.ts).
   */
  routesFile: Readonly<{ path: string; file: RoutesFile }> | undefined;
}>;
