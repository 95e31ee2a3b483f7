/**
 * Everything a run's load needs, started from the scenario table: Redis, the upstream and the
 * baseline, the authgate gateways the selected scenarios name (side by side), an organization with
 * a login token and an API key, issue 18's references, and a check of every scenario's request
 * before any load. Returns the scenarios ready to measure.
 */
import { randomBytes } from 'node:crypto';
import { send, sendJson } from '../lib/http.js';
import { freePort } from '../lib/proc.js';
import { startBenchRedis, type BenchRedis } from '../lib/redis.js';
import type { Options } from '../options.js';
import { GATEWAYS, MAIN, NOIDENT, REFERENCE_GATEWAYS, REPLICA, SPECS, TRACING_SCENARIOS, type GatewaySpec, type ScenarioId, type ScenarioSpec } from '../scenarios.js';
import { providerTokens, startBenchIssuer } from '../issuers.js';
import { checkIdentityKeys } from './identity-check.js';
import { benchFile, GENERATOR_CORE, keepTemporary, LoadGenerator, makeIdentityKey, runFile, SERVER_CORE, startGateway, startNodeChild, UA, type Gateway } from './processes.js';
import { AUTHZ_REFERENCES, startReferences, type Server } from './references.js';
import { watched, type Scenario } from './rounds.js';
import { BENCH_TENANT_LIMITS } from './tenant-limits.js';

export type Run = {
  redis: BenchRedis;
  load: LoadGenerator;
  main: Gateway;
  /** The revocation test's second replica (full run only). */
  replica: Gateway | undefined;
  scenarios: Scenario[];
  /** Selected but not run, with the one-line reason: the build under test cannot (e.g. no routes file). */
  skipped: Map<ScenarioId, string>;
  nginxSkipped: boolean;
  identityNote: string;
  /** The main gateway's organization: its login, and a login token's bearer header. */
  email: string;
  password: string;
  bearer: Record<string, string>;
  /** The request every scenario sends: the same path and headers through every hop. */
  headersWith(credential: string): Record<string, string>;
  /** The API-key scenario's request to the main gateway (the extra phases' proxied traffic). */
  apikeySpec: Scenario['spec'];
};

type Credentials = { apiKey: string; token: string; organizationId: string; providerRs256?: string; providerEs256?: string };

/** An organization, a login token and an API key, made through a gateway's own API. */
async function makeCredentials(gateway: Gateway, adminToken: string, name: string, email: string, password: string): Promise<Credentials> {
  const org = await sendJson(`${gateway.opsUrl}/admin/organizations`, { headers: { authorization: `Bearer ${adminToken}` }, body: { name, email, password }, expect: 201 });
  const { token } = await sendJson(`${gateway.publicUrl}/auth/login`, { body: { email, password }, expect: 200 });
  const { apiKey } = await sendJson(`${gateway.publicUrl}/auth/api-key`, { headers: { authorization: `Bearer ${token}` }, expect: 201 });
  return { apiKey, token, organizationId: org.id };
}

const freshEmail = () => `bench-${randomBytes(4).toString('hex')}@bench.test`;

export async function startRun(options: Options, redisBinary: string, log: (text: string) => void): Promise<Run> {
  const redis = await startBenchRedis(redisBinary, SERVER_CORE);
  keepTemporary(redis.dir); // stopped with every other process, then its directory removed
  const upstream = await startNodeChild('upstream', benchFile('upstream.js'), [], SERVER_CORE);
  const upstreamUrl = `http://127.0.0.1:${upstream.port}`;
  const baseline = await startNodeChild('baseline', benchFile('baseline.js'), [upstreamUrl], SERVER_CORE);

  const adminToken = randomBytes(24).toString('base64url');
  // Production refuses to start without a signing key while the assertion is on (the default).
  // An older build (--compare, --gateway) warns about the unknown setting and goes on.
  const identityKey = makeIdentityKey();
  const identityOff = options.env['AUTHGATE_IDENTITY_ASSERTION'] === 'off';
  const common: Record<string, string> = {
    AUTHGATE_JWT_SECRET: randomBytes(48).toString('base64url'),
    AUTHGATE_ADMIN_TOKEN: adminToken,
    AUTHGATE_UPSTREAM_URL: upstreamUrl,
    AUTHGATE_REDIS_URL: redis.url,
    ...(identityOff ? {} : { AUTHGATE_IDENTITY_KEY_FILE: identityKey.file }),
    // Keys and logins at full speed for the extra phases: the per-tenant growth limits off (tenant-limits.ts).
    ...BENCH_TENANT_LIMITS,
    ...options.env,
  };
  const profileFlags = [...(options.cpuProfDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', options.cpuProfDir]), ...options.nodeFlags];

  // The selection: --only's scenarios, the baseline, and what they are measured against.
  const only = options.only;
  const wanted = (id: ScenarioId): boolean => only === undefined || only.includes(id) || id === 'baseline' || only.some((o) => SPECS.find((s) => s.id === o)?.bringsAlong?.includes(id));
  const selected = SPECS.filter((s) => (s.withGatewayOnly === true ? s.onlyWith === undefined || s.onlyWith.some((id) => SPECS.some((t) => t.id === id && wanted(t.id))) : wanted(s.id)));
  // A reference served by a gateway (issue 30's nginx in front of authgate's authz listener) needs that gateway.
  const gatewayOf = (s: ScenarioSpec) => (typeof s.server === 'string' ? REFERENCE_GATEWAYS[s.server] : s.server);
  // Issue 33: the tracing twins export to the bench's own OTLP sink, started only for them. On the
  // generator's core, not the servers': a Collector runs beside the gateway, not on its CPU, and
  // on core 0 the sink's reading took ~5–6 µs of that core per traced request from the twins'
  // throughput (docs/performance.md, issue 33's sixth step). Watched, so its share is printed.
  let sinkPid: number | undefined;
  if (selected.some((s) => TRACING_SCENARIOS.includes(s.id))) {
    const sink = await startNodeChild('otlp-sink', benchFile('otlp-sink.js'), [], GENERATOR_CORE);
    common['OTEL_EXPORTER_OTLP_ENDPOINT'] = `http://127.0.0.1:${sink.port}`;
    sinkPid = sink.proc.pid;
  }

  // The gateways start side by side (each mostly waits for its Redis connection and readiness), in
  // the table's order; one the build cannot run is not started, and its scenarios are skipped.
  const needed = new Set<GatewaySpec>([MAIN, ...selected.flatMap((s) => gatewayOf(s) ?? []), ...(options.extras ? [REPLICA] : [])]);
  const order = [...GATEWAYS, ...[...needed].filter((g) => !GATEWAYS.includes(g))].filter((g) => needed.has(g));
  const unsupported = new Map<GatewaySpec, string>();
  const toStart = order.flatMap((g) => {
    const main = g.main === undefined ? options.gatewayMain : g.main(options);
    if (main === undefined) return [];
    const why = g === MAIN ? undefined : g.unsupported?.(main);
    if (why !== undefined) unsupported.set(g, why);
    return why === undefined ? [{ spec: g, main }] : [];
  });
  for (const why of new Set(unsupported.values())) {
    const ids = selected.filter((s) => { const g = gatewayOf(s); return g !== undefined && unsupported.get(g) === why; }).map((s) => s.id);
    log(`SKIPPED: ${ids.join(', ')}: ${why}`);
  }
  if (profileFlags.length > 0 && !toStart.some(({ spec }) => spec.name === options.profileGateway)) {
    throw new Error(`--profile-gateway ${options.profileGateway}: no such gateway in this run (started: ${toStart.map(({ spec }) => spec.name).join(', ')})`);
  }
  // A gateway serving the authorization endpoints gets free ports for them (issue 30): the HTTP
  // one behind nginx, the gRPC one loaded by the gRPC client.
  const authzPorts = new Map<GatewaySpec, number>();
  const grpcPorts = new Map<GatewaySpec, number>();
  for (const { spec } of toStart) {
    if (spec.authz === true) authzPorts.set(spec, await freePort());
    if (spec.authzGrpc === true) grpcPorts.set(spec, await freePort());
  }
  // Issue 49: the bench's own identity provider, for a gateway that trusts it (bench/issuers.ts).
  const benchIssuer = toStart.some(({ spec }) => spec.issuers === true) ? await startBenchIssuer() : undefined;
  const envOf = (spec: GatewaySpec): Record<string, string> => {
    const env = { ...(spec.env?.(common, runFile) ?? common), ...(spec.issuers === true && benchIssuer !== undefined && { AUTHGATE_ROUTES_FILE: runFile('routes-issuers.yaml', benchIssuer.routesFile) }) };
    const authzPort = authzPorts.get(spec);
    const grpcPort = grpcPorts.get(spec);
    return {
      ...env,
      ...(authzPort === undefined ? {} : { AUTHGATE_AUTHZ_HOST: '127.0.0.1', AUTHGATE_AUTHZ_PORT: String(authzPort) }),
      ...(grpcPort === undefined ? {} : { AUTHGATE_AUTHZ_GRPC_PORT: String(grpcPort) }),
    };
  };
  const startedGateways = await Promise.all(toStart.map(({ spec, main }) => startGateway(spec.name, main, envOf(spec), spec.name === options.profileGateway ? profileFlags : [])));
  const gateways = new Map(toStart.map(({ spec }, i) => [spec, startedGateways[i]!]));
  const gwA = gateways.get(MAIN)!;
  const load = await LoadGenerator.start();
  log(`pids: authgate ${gwA.proc.pid}, baseline ${baseline.proc.pid}, upstream ${upstream.proc.pid}, redis ${redis.pid}`);

  // Data: one organization on the main gateway, valid on every gateway of the same build (they
  // share the Redis and the JWT secret); a gateway of another build makes its own.
  const email = freshEmail();
  const password = randomBytes(18).toString('base64url');
  const mine: Credentials = await makeCredentials(gwA, adminToken, 'Bench', email, password);
  const trusting = [...gateways].find(([spec]) => spec.issuers === true)?.[1];
  if (benchIssuer !== undefined && trusting !== undefined) Object.assign(mine, await providerTokens(benchIssuer, trusting, adminToken, mine.organizationId));
  const credentialsOf = new Map<GatewaySpec, Credentials>();
  for (const [spec, gateway] of gateways) {
    if (spec.ownCredentials === true) credentialsOf.set(spec, await makeCredentials(gateway, adminToken, 'Bench compare', freshEmail(), password));
  }
  const headersWith = (credential: string) => ({ 'user-agent': UA, authorization: `Bearer ${credential}` });

  // Issue 30's references: nginx in front of each started gateway's authz listener.
  const authz = AUTHZ_REFERENCES.flatMap((name) => {
    const spec = REFERENCE_GATEWAYS[name];
    const started = spec === undefined ? undefined : gateways.get(spec);
    return started === undefined ? [] : [{ name, port: authzPorts.get(spec!)!, pid: started.proc.pid }];
  });
  const refs = await startReferences({ wanted: (id) => selected.some((s) => s.id === id), upstreamPort: upstream.port, redis, apiKey: mine.apiKey, organizationId: mine.organizationId, headersWith, log, authz });

  // Each selected scenario with its server, or skipped with the reason.
  const fixed: Record<'upstream' | 'baseline', Server> = { upstream: { url: upstreamUrl, pid: upstream.proc.pid }, baseline: { url: `http://127.0.0.1:${baseline.port}`, pid: baseline.proc.pid } };
  const serverOf = (s: ScenarioSpec): Server | undefined => {
    if (s.server === 'upstream' || s.server === 'baseline') return fixed[s.server];
    if (typeof s.server === 'string') return refs.servers.get(s.server);
    const gateway = gateways.get(s.server);
    const grpcPort = grpcPorts.get(s.server);
    if (s.protocol === 'ext_authz_grpc') return gateway === undefined || grpcPort === undefined ? undefined : { url: `127.0.0.1:${grpcPort}`, pid: gateway.proc.pid };
    return gateway === undefined ? undefined : { url: gateway.publicUrl, pid: gateway.proc.pid };
  };
  const skipped = new Map<ScenarioId, string>();
  const scenarios: Scenario[] = [];
  for (const s of selected) {
    const server = serverOf(s);
    const gateway = gatewayOf(s);
    if (server === undefined) {
      const why = gateway === undefined ? undefined : unsupported.get(gateway);
      if (why !== undefined) skipped.set(s.id, why);
      continue;
    }
    const credentials = (gateway === undefined ? undefined : credentialsOf.get(gateway)) ?? mine;
    const credential = credentials[s.credential];
    if (credential === undefined) throw new Error(`${s.id}: no ${s.credential} credential on this run`);
    const spec: Scenario['spec'] = { url: server.url, path: s.path ?? '/accounts', method: 'GET', headers: headersWith(credential), connections: options.connections, ...(s.garbage === undefined ? {} : { garbage: s.garbage }), ...(s.protocol === undefined ? {} : { protocol: s.protocol }) };
    scenarios.push({ id: s.id, title: typeof s.title === 'string' ? s.title : s.title({ options, nginxVersion: refs.nginxVersion }), spec, server: server.pid });
    // A gRPC scenario: one Check through the load generator itself, allowed, before any load.
    if (s.protocol === 'ext_authz_grpc') {
      const [probe] = await load.run({ ...spec, label: `${s.id} check`, amount: 1, connections: 1 });
      if (probe?.statusCodes['200'] !== 1) throw new Error(`${s.id}: the Check was not allowed: ${JSON.stringify(probe?.statusCodes)} (errors ${probe?.errors})`);
    }
    // Before any load: 200, and through a proxy the upstream saw the organization.
    if (s.check === undefined) continue;
    for (const path of [spec.path, ...(s.checkPaths ?? [])]) {
      const answer = await send(`${server.url}${path}`, { headers: spec.headers });
      if (answer.status !== 200) throw new Error(`${s.check}: GET ${path} answered ${answer.status}: ${answer.body.slice(0, 200)}`);
      if (s.server !== 'upstream' && s.server !== 'baseline' && !answer.body.includes(credentials.organizationId)) throw new Error(`${s.check}: the upstream did not see x-organization-id`);
    }
  }
  const identityNote = await checkIdentityKeys(gwA, gateways.get(NOIDENT), identityOff ? undefined : identityKey.publicJwk);
  log(identityNote);

  // Watched around every slice: the servers, Redis, and every gateway that serves a scenario.
  watched.set('upstream', upstream.proc.pid).set('baseline', baseline.proc.pid).set(MAIN.watchAs ?? MAIN.name, gwA.proc.pid).set('redis', redis.pid);
  for (const [spec, gateway] of gateways) {
    if (spec !== MAIN && scenarios.some((s) => s.server === gateway.proc.pid)) watched.set(spec.watchAs ?? spec.name, gateway.proc.pid);
  }
  for (const [name, pid] of refs.watch) watched.set(name, pid);
  if (sinkPid !== undefined) watched.set('otlp-sink', sinkPid);

  const apikeySpec: Scenario['spec'] = { url: gwA.publicUrl, path: '/accounts', method: 'GET', headers: headersWith(mine.apiKey), connections: options.connections };
  return { redis, load, main: gwA, replica: gateways.get(REPLICA), scenarios, skipped, nginxSkipped: refs.nginxSkipped, identityNote, email, password, bearer: { authorization: `Bearer ${mine.token}` }, headersWith, apikeySpec };
}
