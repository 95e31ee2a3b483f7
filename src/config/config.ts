/** The gateway's configuration after config/load.ts has checked it: plain, typed, frozen. */
export type Environment = 'production' | 'sandbox';

export type HostPort = Readonly<{ host: string; port: number }>;

export type RedisStoreConfig = Readonly<{
  kind: 'redis';
  url?: string;
  sentinels?: readonly HostPort[];
  sentinelName?: string;
  clusterNodes?: readonly HostPort[];
  username?: string;
  password?: string;
  prefix: string;
  commandTimeoutMs: number;
}>;

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
  upstream: Readonly<{
    /** undefined: development without an upstream; main.ts starts the bundled example. */
    url: string | undefined;
    timeoutMs: number;
  }>;
  store: StoreConfig;
  cache: Readonly<{ max: number; ttlSeconds: number; negativeTtlSeconds: number }>;
  trustProxy: boolean | number | string;
  /**
   * 'on': the gateway terminates TLS itself with these files (reloaded when they change);
   * 'offloaded': an ingress does it; 'off': plain HTTP (warned about in production).
   */
  tls: Readonly<{ mode: 'on'; certFile: string; keyFile: string }> | Readonly<{ mode: 'off' | 'offloaded' }>;
  shutdown: Readonly<{ delaySeconds: number; graceSeconds: number }>;
  shedding: Readonly<{ maxEventLoopDelayMs: number; maxEventLoopUtilization: number }>;
  log: Readonly<{ level: string }>;
}>;
