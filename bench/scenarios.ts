/**
 * The bench's scenarios, as data: what serves each one, with which credential and path, and the
 * target it is held to. The runner (bench/runner/) starts what the selected entries need and
 * measures them in interleaved rounds; the report (bench/report/) turns the entries' targets into
 * rows. Adding a scenario is one entry in SCENARIOS (with a gateway of its own, a GatewaySpec
 * beside it: a constant when two scenarios share it). docs/performance.md, "Adding a scenario".
 */
import type { RunSpec } from './loadgen.js';
import type { Options } from './options.js';
import type { Summary } from './report/summary.js';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { authzUnsupported } from './authz.js';
import { ROUTES_LAST_PATH, ROUTES_PROBE_PATH, routesFile, routesFileUnsupported } from './routes-file.js';
import { authzGrpcUnsupported } from './authz-grpc.js';
import { issuersUnsupported } from './issuers.js';

type Env = Record<string, string>;

/** The servers the runner starts besides authgate's gateways (bench/runner/references.ts, setup.ts). */
export type Reference = 'upstream' | 'baseline' | 'nginx' | 'nginx-authz' | 'nginx-authz-noident' | 'nginx-authz-compare' | 'node-gateway' | 'node-gateway-cold';

/** An authgate process: the build under test (or another) with the run's common settings and these. */
export type GatewaySpec = Readonly<{
  /** Its process name in the logs; `watchAs`: its name in the CPU and RSS notes (default the same). */
  name: string;
  watchAs?: string;
  /** Its settings from the run's common ones; `file(name, text)` writes a file in the run's private temporary directory. */
  env?: (common: Env, file: (name: string, text: string) => string) => Env;
  /** The build it runs: by default the one under test (--gateway); undefined, not started. */
  main?: (options: Options) => string | undefined;
  /** Makes its own organization and API key through its own API: another build may store them differently. */
  ownCredentials?: boolean;
  /** One line saying why this build cannot run it (its scenarios are then skipped), or undefined. */
  unsupported?: (main: string) => string | undefined;
  /** Also serves Envoy ext_authz over gRPC (AUTHGATE_AUTHZ_GRPC_PORT on a free port the runner picks). */
  authzGrpc?: boolean;
  /** Its authz listener on (AUTHGATE_AUTHZ_PORT, a free loopback port): the edge proxies' auth service (issue 30). */
  authz?: boolean;
  /** Issue 49: trusts the bench's own identity provider (bench/issuers.ts); the runner gives it that routes file. */
  issuers?: boolean;
}>;

export type ScenarioSpec = Readonly<{
  id: string;
  title: string | ((context: { options: Options; nginxVersion: string | undefined }) => string);
  server: Reference | GatewaySpec;
  /** The main gateway's API key (on a gateway with own credentials, its own) or login token; or a provider token of the bench's issuer (issue 49). */
  credential: 'apiKey' | 'token' | 'providerRs256' | 'providerEs256';
  /** Default /accounts. */
  path?: string;
  garbage?: RunSpec['garbage'];
  target: string;
  /** The verdict; without it, a reference row without one. */
  ok?: (s: Summary) => boolean;
  /** The ratio column also shows the p99 ratio. */
  showP99?: boolean;
  /** Answers counted as expected besides 200. */
  alsoExpected?: readonly string[];
  /** Scenarios `--only` brings along with this one: what it is measured against. */
  bringsAlong?: readonly string[];
  /** Checked before load (200, and the organization seen by the upstream unless the server is the upstream or baseline): the label of a failure, and more paths. */
  check?: string;
  checkPaths?: readonly string[];
  /** Not named in --help (still accepted by --only). */
  unlisted?: boolean;
  /** Not selectable with --only: runs whenever its gateway does (--compare). */
  withGatewayOnly?: boolean;
  /** With withGatewayOnly: only when one of these scenarios is selected too. */
  onlyWith?: readonly string[];
  /** 'ext_authz_grpc': the load is Envoy's Check calls to the gateway's gRPC port (bench/grpc-load.ts), checked to be allowed first. */
  protocol?: 'ext_authz_grpc';
}>;

const withoutIdentity = (env: Env): Env => ({
  // The loader refuses AUTHGATE_IDENTITY_* while the assertion is off (config/load.ts).
  ...Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith('AUTHGATE_IDENTITY_'))),
  AUTHGATE_IDENTITY_ASSERTION: 'off',
});
/** High enough never to refuse in a benchmark, yet counted: every request spends leased budget. */
export const BENCH_RATE_LIMIT = '1000000000/60s';

// Gateways, in the order they start (the mirrored identity pair deliberately the other way round).
/** The main gateway: the setup's, the revocation's and login's; `authgate` in the notes. */
export const MAIN: GatewaySpec = { name: 'authgate-a', watchAs: 'authgate' };
const COLD: GatewaySpec = { name: 'authgate-cold', env: (c) => ({ ...c, AUTHGATE_CACHE_MAX: '0' }) };
/** The same build without its one log line per request: what the access log costs. */
const QUIET: GatewaySpec = { name: 'authgate-quiet', env: (c) => ({ ...c, LOG_LEVEL: 'warn' }) };
/**
 * Twins for the identity assertion's cost (neither is the main gateway, which was favoured by
 * about 0.04 in an A/A run): one with it, one without (and so without its key). They share the
 * Redis and the JWT secret, so the main gateway's key and token work on them.
 */
const IDENT: GatewaySpec = { name: 'authgate-ident' };
/** Without the assertion: also the gateway checked to serve no JWKS. */
export const NOIDENT: GatewaySpec = { name: 'authgate-noident', env: withoutIdentity };
/** The twin of authgate-ident with the rate limit on: the pair the limit's cost is measured on. */
const LIMITED: GatewaySpec = { name: 'authgate-limited', env: (c) => ({ ...c, AUTHGATE_RATE_LIMIT: BENCH_RATE_LIMIT }) };
const NOIDENT_B: GatewaySpec = { name: 'authgate-noident-b', env: withoutIdentity };
const IDENT_B: GatewaySpec = { name: 'authgate-ident-b' };
/** The revocation test's second replica (no scenario: started for the full run's extra phases). */
export const REPLICA: GatewaySpec = { name: 'authgate-replica' };
const COMPARE: GatewaySpec = { name: 'authgate-compare', main: (o) => o.compareMain, ownCredentials: true };
/**
 * Issue 28: twins with a routes file of today's two routes and with one of 50; a second pair
 * started the other way round, as for the identity assertion (twins alike differed by up to 0.04,
 * more than the 0.03 measured here).
 */
const routesTwin = (name: string, count: number): GatewaySpec => ({ name, env: (c, file) => ({ ...c, AUTHGATE_ROUTES_FILE: file(`routes-${count}.yaml`, routesFile(count)) }), unsupported: routesFileUnsupported });
const ROUTES_2 = routesTwin('authgate-routes-2', 2);
const ROUTES_50 = routesTwin('authgate-routes-50', 50);
const ROUTES_50_B = routesTwin('authgate-routes-50-b', 50);
const ROUTES_2_B = routesTwin('authgate-routes-2-b', 2);
/**
 * Issue 47: the twin of authgate-routes-2 whose file also puts every organization on a plan with a
 * quota never reached: the quota's cost on the hot path (a build without plans is skipped, as a
 * build without a routes file is).
 */
const QUOTA_2: GatewaySpec = {
  name: 'authgate-quota-2',
  env: (c, file) => ({ ...c, AUTHGATE_ROUTES_FILE: file('routes-2-quota.yaml', routesFile(2, true)) }),
  unsupported: (main) => routesFileUnsupported(main) ?? (existsSync(join(dirname(main), 'limits', 'quota.js')) ? undefined : 'this build has no plans\' quotas (issue 47)'),
};
/**
 * Issue 49: a gateway trusting the bench's own identity provider (bench/issuers.ts: a JWKS on
 * loopback, tokens minted by the bench), its routes file today's two routes each also taking
 * `issuer:bench`. A provider token and a login token are measured on this one process, so the
 * difference is the credential's alone (no twins: no process's favour to cancel out).
 */
const ISSUERS: GatewaySpec = { name: 'authgate-issuers', issuers: true, unsupported: issuersUnsupported };
/**
 * Issue 30: authgate as nginx's auth service. Its own process with the run's settings and the
 * authz listener on, so its CPU time per decision is its own; nginx in front of it is started as
 * a reference (bench/runner/references.ts) and the scenarios name that reference as their server.
 */
export const AUTHZ: GatewaySpec = { name: 'authgate-authz', authz: true, unsupported: authzUnsupported };
/**
 * --compare with issue 30's scenarios: the other build's authz listener behind an nginx of its
 * own, measured in the same rounds (the way to compare two builds' decisions on a noisy machine).
 * It uses the main gateway's credentials: both builds share the Redis and the JWT secret.
 */
export const AUTHZ_COMPARE: GatewaySpec = { name: 'authgate-authz-compare', main: (o) => o.compareMain, authz: true, unsupported: authzUnsupported };
/**
 * Issue 30, like for like with the key service: the same build's authz listener with the identity
 * assertion off, so its allow carries what the key service's does (the organization, plus its
 * scopes) and nginx copies no signed assertion upstream. It splits the nginx-authz row's figure
 * into the decision's cost and the assertion's transport (nginx copying it, the upstream reading it).
 */
const AUTHZ_NOIDENT: GatewaySpec = { name: 'authgate-authz-noident', env: withoutIdentity, authz: true, unsupported: authzUnsupported };
/** The gateways a reference needs started first (their pids and ports are handed to it). */
export const REFERENCE_GATEWAYS: Partial<Record<Reference, GatewaySpec>> = { 'nginx-authz': AUTHZ, 'nginx-authz-noident': AUTHZ_NOIDENT, 'nginx-authz-compare': AUTHZ_COMPARE };
/** Issue 30: the edge proxies' authorization service, Envoy ext_authz over gRPC (a build without it is skipped). */
const AUTHZ_GRPC: GatewaySpec = { name: 'authgate-authz-grpc', authzGrpc: true, unsupported: authzGrpcUnsupported };
/**
 * Issue 33: twins with tracing off, on with 0 % sampling and on with 100 % sampling, exporting
 * to the bench's own OTLP sink (bench/otlp-sink.ts; the runner puts its address in
 * OTEL_EXPORTER_OTLP_ENDPOINT when a tracing scenario is selected). The load sends no
 * traceparent: every request is a root, sampled by the ratio.
 */
/** A build with tracing has its module beside main.js (dist/tracing/). */
const tracingSupported = (main: string): boolean => existsSync(join(dirname(main), 'tracing', 'tracing.js'));
const tracingTwin = (name: string, tracing: 'off' | '0' | '1'): GatewaySpec => ({
  name,
  env: (c) => (tracing === 'off' ? { ...c, AUTHGATE_TRACING: 'off' } : { ...c, AUTHGATE_TRACING: 'on', OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: tracing }),
  unsupported: (main) => (tracingSupported(main) ? undefined : 'this build has no AUTHGATE_TRACING (issue 33)'),
});
const TRACING_OFF = tracingTwin('authgate-tracing-off', 'off');
const TRACING_0 = tracingTwin('authgate-tracing-0', '0');
const TRACING_100 = tracingTwin('authgate-tracing-100', '1');
/**
 * The second, mirrored set (started the other way round: 100 %, 0 %, off), as for the identity
 * assertion: two processes of the same build and settings differ by more than the 0.02 measured
 * here (issue 33's fourth step: the off twin against itself), and which is ahead depends on the
 * process, so each cost is the mean of both sets' differences.
 */
const TRACING_100_B = tracingTwin('authgate-tracing-100-b', '1');
const TRACING_0_B = tracingTwin('authgate-tracing-0-b', '0');
const TRACING_OFF_B = tracingTwin('authgate-tracing-off-b', 'off');
export const GATEWAYS: readonly GatewaySpec[] = [MAIN, COLD, QUIET, IDENT, NOIDENT, LIMITED, NOIDENT_B, IDENT_B, REPLICA, COMPARE, ROUTES_2, ROUTES_50, ROUTES_50_B, ROUTES_2_B, QUOTA_2, ISSUERS, TRACING_OFF, TRACING_0, TRACING_100, TRACING_100_B, TRACING_0_B, TRACING_OFF_B, AUTHZ_GRPC, AUTHZ, AUTHZ_NOIDENT, AUTHZ_COMPARE];
/** The scenarios that need the bench's OTLP sink (bench/runner/setup.ts starts it for them). */
export const TRACING_SCENARIOS: readonly string[] = ['tracing-off', 'tracing-0', 'tracing-100', 'tracing-off-b', 'tracing-0-b', 'tracing-100-b'];

const identityCost = '(reference: the identity assertion’s cost)';
const secondPair = '(reference: the identity assertion’s cost, second pair)';
const routesSize = '(reference: the routes table’s size)';
const routesSecondPair = '(reference: the routes table’s size, second pair)';
const quotaCost = '(issue 47: within 0.05 of routes-2, the same file without plans)';
const providerCost = '(issue 49: within 0.05 of issuer-jwt, a login token on the same gateway)';

/** In this order in the table and in the first round. */
export const SCENARIOS = [
  { id: 'upstream', title: 'upstream direct', server: 'upstream', credential: 'apiKey', target: '(reference)', check: 'upstream' },
  { id: 'baseline', title: 'baseline: fastify + @fastify/http-proxy, no auth', server: 'baseline', credential: 'apiKey', target: '(baseline)', check: 'baseline', unlisted: true },
  { id: 'apikey', title: 'authgate, API key, warm cache', server: MAIN, credential: 'apiKey', target: '≥ 0.90, p99 ≤ 1.3× baseline', ok: (s) => s.ratio >= 0.9 && s.p99Ratio <= 1.3, showP99: true, check: 'authgate (API key)' },
  { id: 'nolog', title: 'authgate, API key, warm cache, access log off (LOG_LEVEL=warn)', server: QUIET, credential: 'apiKey', target: '(reference: the access log’s cost)', showP99: true, check: 'authgate (access log off)' },
  { id: 'jwt', title: 'authgate, JWT, warm cache', server: MAIN, credential: 'token', target: '≥ 0.85', ok: (s) => s.ratio >= 0.85, check: 'authgate (JWT)' },
  { id: 'apikey-ident', title: 'authgate twin, API key, warm cache, identity assertion on', server: IDENT, credential: 'apiKey', target: identityCost, showP99: true, bringsAlong: ['apikey-ident-b'], check: 'authgate twin (identity assertion on, API key)' },
  { id: 'jwt-ident', title: 'authgate twin, JWT, warm cache, identity assertion on', server: IDENT, credential: 'token', target: identityCost, bringsAlong: ['jwt-ident-b'], check: 'authgate twin (identity assertion on, JWT)' },
  { id: 'apikey-noident', title: 'authgate, API key, warm cache, identity assertion off', server: NOIDENT, credential: 'apiKey', target: identityCost, showP99: true, bringsAlong: ['apikey-noident-b'], check: 'authgate (identity assertion off, API key)' },
  { id: 'jwt-noident', title: 'authgate, JWT, warm cache, identity assertion off', server: NOIDENT, credential: 'token', target: identityCost, bringsAlong: ['jwt-noident-b'], check: 'authgate (identity assertion off, JWT)' },
  { id: 'apikey-ident-b', title: 'authgate twin B, API key, identity assertion on', server: IDENT_B, credential: 'apiKey', target: secondPair, unlisted: true, check: 'authgate twin B (identity assertion on, API key)' },
  { id: 'jwt-ident-b', title: 'authgate twin B, JWT, identity assertion on', server: IDENT_B, credential: 'token', target: secondPair, unlisted: true, check: 'authgate twin B (identity assertion on, JWT)' },
  { id: 'apikey-noident-b', title: 'authgate twin B, API key, identity assertion off', server: NOIDENT_B, credential: 'apiKey', target: secondPair, unlisted: true, check: 'authgate twin B (identity assertion off, API key)' },
  { id: 'jwt-noident-b', title: 'authgate twin B, JWT, identity assertion off', server: NOIDENT_B, credential: 'token', target: secondPair, unlisted: true, check: 'authgate twin B (identity assertion off, JWT)' },
  { id: 'apikey-limited', title: `authgate twin, API key, warm cache, identity assertion on, rate limit ${BENCH_RATE_LIMIT}`, server: LIMITED, credential: 'apiKey', target: '(reference: the rate limit’s cost)', showP99: true, bringsAlong: ['apikey-ident'], check: 'authgate twin (rate limit on, API key)' },
  { id: 'cold', title: 'authgate, cache off (Redis read per request)', server: COLD, credential: 'apiKey', target: '≥ 0.60', ok: (s) => s.ratio >= 0.6, check: 'authgate (cache off)' },
  { id: 'nginx-auth', title: ({ nginxVersion }) => `nginx auth_request → node:http key service (${nginxVersion ?? 'nginx'}, one process; SHA-256 + Map lookup)`, server: 'nginx', credential: 'apiKey', target: '(reference: issue 18)', showP99: true, check: 'nginx auth_request (API key)' },
  // Issue 30: the same nginx with authgate deciding (≥ 0.95× nginx-auth, same p99 or better); the CPU column is authgate's per decision.
  { id: 'nginx-authz', title: ({ nginxVersion }) => `nginx auth_request → authgate /authz/auth-request (${nginxVersion ?? 'nginx'}), API key, warm cache; CPU: authgate's per decision`, server: 'nginx-authz', credential: 'apiKey', target: '(issue 30: ≥ 0.95× nginx-auth, p99 no worse)', showP99: true, bringsAlong: ['nginx-auth', 'nginx-authz-noident'], check: 'nginx → authgate authz (API key)' },
  { id: 'nginx-authz-jwt', title: ({ nginxVersion }) => `nginx auth_request → authgate /authz/auth-request (${nginxVersion ?? 'nginx'}), JWT, warm cache; CPU: authgate's per decision`, server: 'nginx-authz', credential: 'token', target: '(issue 30: ≥ 0.95× nginx-auth, p99 no worse)', showP99: true, bringsAlong: ['nginx-auth'], check: 'nginx → authgate authz (JWT)' },
  { id: 'nginx-authz-noident', title: ({ nginxVersion }) => `nginx auth_request → authgate /authz/auth-request (${nginxVersion ?? 'nginx'}), API key, warm cache, identity assertion off (like for like with the key service)`, server: 'nginx-authz-noident', credential: 'apiKey', target: '(reference: issue 30 without the assertion’s transport)', showP99: true, bringsAlong: ['nginx-auth'], check: 'nginx → authgate authz, identity assertion off (API key)' },
  { id: 'node-gateway', title: 'node:http + undici Pool, the key service’s check, nothing else (the floor of a Node forwarding core)', server: 'node-gateway', credential: 'apiKey', target: '(reference: issue 18, the floor of a Node forwarding core)', showP99: true, check: 'node-gateway (API key)' },
  { id: 'node-gateway-cold', title: 'the same, the digest read from Redis per request (one HGET, ioredis auto-pipelined)', server: 'node-gateway-cold', credential: 'apiKey', target: '(reference: issue 18, that floor with a Redis read per request)', check: 'node-gateway-cold (API key)' },
  { id: 'garbage', title: 'authgate, 10% garbage keys (distinct, valid checksum)', server: MAIN, credential: 'apiKey', garbage: { every: 10, environment: 'production' }, target: '≥ 0.85', ok: (s) => s.ratio >= 0.85, alsoExpected: ['401'] },
  // Issue 28: a request to the last route of a 50-route table against today's two routes spelled out in a file.
  { id: 'routes-2', title: 'authgate twin, API key, warm cache, routes file of today’s 2 routes', server: ROUTES_2, credential: 'apiKey', target: routesSize, bringsAlong: ['routes-2-b'], check: 'authgate twin (routes file, 2 routes)' },
  { id: 'routes-50', title: `authgate twin, API key, warm cache, routes file of 50 routes, to the last (${ROUTES_LAST_PATH})`, server: ROUTES_50, credential: 'apiKey', path: ROUTES_LAST_PATH, target: routesSize, showP99: true, bringsAlong: ['routes-2', 'routes-50-b', 'routes-2-b'], check: 'authgate twin (routes file, 50 routes)', checkPaths: [ROUTES_PROBE_PATH] },
  { id: 'quota', title: 'authgate twin, API key, warm cache, routes file of 2 routes, a plan with a quota never reached', server: QUOTA_2, credential: 'apiKey', target: quotaCost, showP99: true, bringsAlong: ['routes-2'], check: 'authgate twin (a quota never reached)' },
  // Issue 49: a warm provider token (RS256, ES256) against a warm login token on the same gateway, same rounds.
  { id: 'issuer-jwt', title: 'authgate with a trusted issuer, JWT (login token), warm cache, routes file of 2 routes', server: ISSUERS, credential: 'token', target: '(reference: issue 49, what a provider token is measured against)', check: 'authgate with a trusted issuer (login token)' },
  { id: 'issuer-rs256', title: 'authgate with a trusted issuer, provider token (RS256), warm cache', server: ISSUERS, credential: 'providerRs256', target: providerCost, showP99: true, bringsAlong: ['issuer-jwt'], check: 'authgate with a trusted issuer (RS256 provider token)' },
  { id: 'issuer-es256', title: 'authgate with a trusted issuer, provider token (ES256), warm cache', server: ISSUERS, credential: 'providerEs256', target: providerCost, showP99: true, bringsAlong: ['issuer-jwt'], check: 'authgate with a trusted issuer (ES256 provider token)' },
  { id: 'routes-2-b', title: 'authgate twin B, API key, routes file of 2 routes', server: ROUTES_2_B, credential: 'apiKey', target: routesSecondPair, unlisted: true, check: 'authgate twin B (routes file, 2 routes)' },
  { id: 'routes-50-b', title: `authgate twin B, API key, routes file of 50 routes, to the last (${ROUTES_LAST_PATH})`, server: ROUTES_50_B, credential: 'apiKey', path: ROUTES_LAST_PATH, target: routesSecondPair, unlisted: true, bringsAlong: ['routes-2-b'], check: 'authgate twin B (routes file, 50 routes)', checkPaths: [ROUTES_PROBE_PATH] },
  // Issue 33: tracing's cost, each twin against the one with tracing off.
  { id: 'tracing-off', title: 'authgate twin, API key, warm cache, tracing off', server: TRACING_OFF, credential: 'apiKey', target: '(reference: tracing’s cost)', showP99: true, check: 'authgate twin (tracing off)' },
  { id: 'tracing-0', title: 'authgate twin, API key, warm cache, tracing on, 0 % sampled', server: TRACING_0, credential: 'apiKey', target: '(reference: tracing’s cost)', showP99: true, bringsAlong: ['tracing-off', 'tracing-0-b', 'tracing-off-b'], check: 'authgate twin (tracing on, 0 %)' },
  { id: 'tracing-100', title: 'authgate twin, API key, warm cache, tracing on, 100 % sampled to a local OTLP receiver', server: TRACING_100, credential: 'apiKey', target: '(reference: tracing’s cost)', showP99: true, bringsAlong: ['tracing-off', 'tracing-100-b', 'tracing-off-b'], check: 'authgate twin (tracing on, 100 %)' },
  { id: 'tracing-off-b', title: 'authgate twin B, API key, tracing off', server: TRACING_OFF_B, credential: 'apiKey', target: '(reference: tracing’s cost, second set)', unlisted: true, check: 'authgate twin B (tracing off)' },
  { id: 'tracing-0-b', title: 'authgate twin B, API key, tracing on, 0 % sampled', server: TRACING_0_B, credential: 'apiKey', target: '(reference: tracing’s cost, second set)', unlisted: true, bringsAlong: ['tracing-off-b'], check: 'authgate twin B (tracing on, 0 %)' },
  { id: 'tracing-100-b', title: 'authgate twin B, API key, tracing on, 100 % sampled', server: TRACING_100_B, credential: 'apiKey', target: '(reference: tracing’s cost, second set)', unlisted: true, bringsAlong: ['tracing-off-b'], check: 'authgate twin B (tracing on, 100 %)' },
  // Issue 30: decisions per second of the ext_authz gRPC endpoint (the req/s column), CPU per decision in the notes.
  { id: 'authz-grpc', title: 'authgate as Envoy ext_authz (gRPC Check over h2c), API key, warm cache: decisions/s', server: AUTHZ_GRPC, credential: 'apiKey', target: '(reference: issue 30, decisions per second)', showP99: true, protocol: 'ext_authz_grpc' },
  { id: 'authz-grpc-jwt', title: 'authgate as Envoy ext_authz (gRPC Check over h2c), JWT, warm cache: decisions/s', server: AUTHZ_GRPC, credential: 'token', target: '(reference: issue 30, decisions per second)', protocol: 'ext_authz_grpc' },
  { id: 'compare', title: ({ options }) => `compare: ${options.compareMain}, API key, warm cache`, server: COMPARE, credential: 'apiKey', target: '(development aid)', showP99: true, withGatewayOnly: true },
  { id: 'nginx-authz-compare', title: ({ options }) => `compare: nginx auth_request → ${options.compareMain}'s /authz/auth-request, API key, warm cache`, server: 'nginx-authz-compare', credential: 'apiKey', target: '(development aid)', showP99: true, withGatewayOnly: true, onlyWith: ['nginx-authz'], check: 'nginx → compared build authz (API key)' },
  { id: 'nginx-authz-jwt-compare', title: ({ options }) => `compare: nginx auth_request → ${options.compareMain}'s /authz/auth-request, JWT, warm cache`, server: 'nginx-authz-compare', credential: 'token', target: '(development aid)', withGatewayOnly: true, onlyWith: ['nginx-authz-jwt'], check: 'nginx → compared build authz (JWT)' },
] as const satisfies readonly ScenarioSpec[];

export type ScenarioId = (typeof SCENARIOS)[number]['id'];

/**
 * Each identity-assertion pair: twin gateways started alike, one with the assertion and one
 * without. Two twins of the same build and settings differed by up to 0.04, and which one was
 * ahead varied, so there are two pairs started in mirrored order (with, without; then without,
 * with): the cost is the mean of both pairs' differences, in which the favour of a process's place
 * cancels out rather than adds. One row for both (API key and JWT).
 */
export const IDENTITY_PAIRS = [
  { with: 'apikey-ident', without: 'apikey-noident', withB: 'apikey-ident-b', withoutB: 'apikey-noident-b', name: 'API key' },
  { with: 'jwt-ident', without: 'jwt-noident', withB: 'jwt-ident-b', withoutB: 'jwt-noident-b', name: 'JWT' },
] as const satisfies readonly { with: ScenarioId; without: ScenarioId; withB: ScenarioId; withoutB: ScenarioId; name: string }[];
/** The most the assertion may take off a ratio to the baseline (issue: within 0.03). */
export const IDENTITY_COST_LIMIT = -0.03;

/**
 * Costs measured as the median over rounds of (ratio with − ratio without), both to the same
 * round's baseline, on twins: one row each, with its limit; `json`: its key in the JSON.
 */
export const PAIR_COSTS = [
  // The rate limit (too high to refuse anything; budget leased a thousand requests at a time)
  // against its twin without, both with the assertion on. The issue: within 0.05 of the API key.
  { with: 'apikey-limited', without: 'apikey-ident', limit: -0.05, json: 'rateLimitCost', name: 'rate limit cost: API key', how: '(median of same-round differences of the ratio with and without it)' },
  // Issue 28: the fast lane serves every route of the table; a request to the last of 50 routes
  // within 0.03 of a 2-route table. Two mirrored pairs, as for the identity assertion.
  { with: 'routes-50', without: 'routes-2', second: ['routes-50-b', 'routes-2-b'], limit: -0.03, json: 'routesTableCost', name: 'routes table cost: API key, the last of 50 routes against 2 routes', how: '(median of same-round differences of the ratio with 50 routes and with 2, averaged over two mirrored pairs of twins)' },
  // Issue 33: tracing on at 0 % within 0.02 of tracing off; at 100 % (to a local receiver) within 0.15.
  // Each the mean of two mirrored sets of twins, as the identity assertion's.
  { with: 'tracing-0', without: 'tracing-off', second: ['tracing-0-b', 'tracing-off-b'], limit: -0.02, json: 'tracingUnsampledCost', name: 'tracing cost: on, 0 % sampled, against off', how: '(median of same-round differences of the ratio with and without it, averaged over two mirrored sets of twins)' },
  { with: 'tracing-100', without: 'tracing-off', second: ['tracing-100-b', 'tracing-off-b'], limit: -0.15, json: 'tracingSampledCost', name: 'tracing cost: on, 100 % sampled to a local OTLP receiver, against off', how: '(median of same-round differences of the ratio with and without it, averaged over two mirrored sets of twins)' },
  // Issue 49: a warm provider token within 0.05 of a warm login token, both on the one gateway that trusts the bench's issuer.
  { with: 'issuer-rs256', without: 'issuer-jwt', limit: -0.05, json: 'providerTokenRs256Cost', name: 'provider token cost: RS256, warm, against a warm login token', how: '(median of same-round differences of the ratio, one gateway serving both)' },
  { with: 'issuer-es256', without: 'issuer-jwt', limit: -0.05, json: 'providerTokenEs256Cost', name: 'provider token cost: ES256, warm, against a warm login token', how: '(median of same-round differences of the ratio, one gateway serving both)' },
] as const satisfies readonly { with: ScenarioId; without: ScenarioId; second?: readonly [ScenarioId, ScenarioId]; limit: number; json: string; name: string; how: string }[];

/** The table as the runner and the report read it. */
export const SPECS: readonly (ScenarioSpec & { id: ScenarioId })[] = SCENARIOS;
