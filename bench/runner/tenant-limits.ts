/**
 * The per-tenant growth limits (issue 26) as every gateway of the bench runs them. The bench's one
 * organization creates keys and logs in at full speed on purpose: 200 keys for the revocation
 * phase, argon2 logins for the event-loop rows (5 s, then 6 s beside proxied load). The defaults
 * (60 key creations and 60 logins a minute, 1000 live sessions) would refuse it after a minute's
 * worth, as they should refuse a tenant's abuse, which the bench is not measuring: its measured
 * load creates nothing. test/bench/tenant-limits.test.ts checks that the gateway reads these as
 * meant, and that the defaults would refuse the bench.
 */
export const BENCH_TENANT_LIMITS: Readonly<Record<string, string>> = {
  AUTHGATE_KEY_CREATION_RATE_LIMIT: 'off',
  AUTHGATE_SESSION_CREATION_RATE_LIMIT: 'off',
  AUTHGATE_MAX_SESSIONS_PER_ORGANIZATION: '1000000',
};
