/**
 * `authgate routes check FILE` and `authgate routes explain METHOD PATH [--file FILE]`: the routes
 * file judged offline, by the same loader a start and a reload use (route-table/load.ts), so a
 * file that passes the check is one the gateway takes, like `nginx -t`.
 *
 * Exit status: check: 0 valid, 1 not (every error on stderr, `FILE:LINE: /pointer: what`); its
 * warnings (route-table/warnings.ts) go to stderr in the same form and never fail it.
 * explain: 0 the request would be forwarded, 1 it would not (404, 405, or refused by the path
 * guard), 2 a usage error or a file that does not load. Nothing is sent anywhere; no setting's
 * value is printed but the upstream URLs the file (or AUTHGATE_UPSTREAM_URL) names.
 */
import type { ScopeRule } from '../../authz/scopes.js';
import { planAllows } from '../../route-table/plans.js';
import { parseArgs } from 'node:util';
import { probeIssuer } from '../../issuers/probe.js';
import { parseKind } from '../../config/setting-kinds.js';
import { settingSpec, type SettingName } from '../../config/settings.js';
import { isAmbiguousPath, isDoublyEncodedPath } from '../../proxy/path-guard.js';
import { BUILTIN_ROUTES_FILE } from '../../route-table/builtin.js';
import { compileRoutes } from '../../route-table/compile.js';
import { isWithin } from '../../route-table/match.js';
import { formatRouteError, loadRoutesFile, type LoadContext } from '../../route-table/load.js';
import { RESERVED_PREFIXES, type CompiledRoute, type PathRefusal, type RouteTable } from '../../route-table/types.js';

export type RoutesIo = Readonly<{
  env: Readonly<Record<string, string | undefined>>;
  stdout: (line: string) => void;
  stderr: (line: string) => void;
}>;

export const ROUTES_USAGE = `  routes check <file>     Check a routes file as a gateway start would (the same code),
                          offline: every error as FILE:LINE: /json/pointer: what is wrong.
                          Exit 0 valid, 1 not.
  routes explain <METHOD> <path> [--file <file>]
                          Which route, scope, credentials and upstream a request would
                          get, or why none, from the file (AUTHGATE_ROUTES_FILE unless
                          --file; the built-in table without either). Exit 0 forwarded,
                          1 not forwarded, 2 the file does not load.
`;

/** Where AUTHGATE_UPSTREAM_URL is unset, `default` is checked with this and shown as unset. */
const STAND_IN_UPSTREAM = 'http://127.0.0.1/';

/** `args`: what follows `routes` on the command line. Returns the exit status. */
export function routesCommand(args: readonly string[], io: RoutesIo): number | Promise<number> {
  const [action, ...rest] = args;
  if (action === 'check') return check(rest, io);
  if (action === 'explain') return explain(rest, io);
  return usage(io, action === undefined ? 'missing routes subcommand (check or explain)' : `unknown routes subcommand '${printable(action)}'`);
}

function check(args: readonly string[], io: RoutesIo): number | Promise<number> {
  const parsed = parse(args, io);
  if (parsed === undefined) return 2;
  const [file, ...extra] = parsed.positionals;
  if (file === undefined || extra.length > 0 || parsed.file !== undefined) return usage(io, 'routes check takes one file: authgate routes check <file>');
  const { context } = contextOf(io.env);
  const loaded = loadRoutesFile(file, context);
  if (!loaded.ok) {
    for (const error of loaded.errors) io.stderr(formatRouteError(error));
    const count = loaded.errors.length;
    io.stderr(`authgate: ${file}: ${count} error${count === 1 ? '' : 's'}; the gateway would not take this file`);
    return 1;
  }
  const { table, warnings } = loaded;
  const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  // Plans only when the file has them: a file without is summed up as it always was.
  const plans = table.plans.size === 0 ? '' : `, ${count(table.plans.size, 'plan')}${table.defaultPlan === undefined ? ' (no defaultPlan: organizations without a plan hold every scope)' : ` (default ${table.defaultPlan.name})`}`;
  // Warnings never fail the check (the gateway takes the file): on stderr, before the verdict.
  for (const warning of warnings) io.stderr(formatRouteError(warning));
  io.stdout(`authgate: ${file} is valid: ${count(table.routes.length, 'route')}, ${count(table.upstreams.size, 'upstream')}, ${count(table.scopes.names.length, 'scope')}${plans}, hash ${table.hash}${warnings.length === 0 ? '' : `; ${count(warnings.length, 'warning')}`}`);
  if (table.issuers.size === 0) return 0;
  // Trusted issuers (issue 49): a provider that cannot be reached from here is a warning, never a failure.
  return Promise.all(
    [...table.issuers.values()].map(async (issuer) => {
      const problem = await probeIssuer(issuer);
      if (problem !== undefined) io.stderr(`authgate: warning: issuers.${issuer.name}: ${problem}; the gateway fetches its keys in the background and answers its tokens 503 until they arrive`);
    }),
  ).then(() => 0);
}

function explain(args: readonly string[], io: RoutesIo): number {
  const parsed = parse(args, io);
  if (parsed === undefined) return 2;
  const [method, target, ...extra] = parsed.positionals;
  if (method === undefined || target === undefined || extra.length > 0) return usage(io, 'routes explain takes a method and a path: authgate routes explain GET /accounts/42 [--file <file>]');
  if (!/^[A-Z]+$/.test(method)) return usage(io, `method '${printable(method)}' must be upper-case letters, as HTTP sends it (GET, POST, ...)`);
  const file = parsed.file ?? nonBlank(io.env.AUTHGATE_ROUTES_FILE);
  const { context, standIn } = contextOf(io.env);
  let table: RouteTable;
  if (file === undefined) {
    const compiled = compileRoutes(BUILTIN_ROUTES_FILE, { ...context, source: undefined });
    if (!compiled.ok) throw new Error('the built-in route table does not compile');
    table = compiled.table;
  } else {
    const loaded = loadRoutesFile(file, context);
    if (!loaded.ok) {
      for (const error of loaded.errors) io.stderr(formatRouteError(error));
      io.stderr(`authgate: ${file} does not load: nothing to explain`);
      return 2;
    }
    table = loaded.table;
  }
  const source = `${file ?? 'the built-in table'} (hash ${table.hash})`;
  const request = `${method} ${printable(target)}`;
  const refuse = (why: string) => {
    io.stdout(`${request}: not forwarded: ${why}`);
    io.stdout(`  table        ${source}`);
    return 1;
  };

  // As the gateway does: the path guard first (refuse, never normalise), then the table.
  if (isAmbiguousPath(target)) return refuse('404: the path guard refuses it (a dot segment, an encoded slash or backslash, or not a path); nothing reaches any upstream');
  const query = target.indexOf('?');
  const path = query === -1 ? target : target.slice(0, query);
  if (isDoublyEncodedPath(path)) return refuse('400: the path guard refuses it (a dot segment, slash or backslash once percent-decoded)');
  const own = RESERVED_PREFIXES.find((prefix) => isWithin(path, prefix));
  const reading = table.read(path);
  if (reading.refusal !== undefined) return refuse(`400 (1240, ${reading.refusal}): ${REFUSALS[reading.refusal]}; nothing reaches any upstream`);
  const route = reading.route;
  if (route === undefined) {
    if (own !== undefined) return refuse(`the gateway's own path (${own} and below): answered by the gateway itself, never forwarded`);
    return refuse('404: no route holds this path; nothing reaches any upstream');
  }
  const scope = route.methods.get(method);
  if (scope === undefined) {
    return refuse(`405: route ${route.id} (${route.match} ${route.path}) does not forward ${method}; Allow: ${route.allow} (no fall back to a broader route)`);
  }
  const upstream = route.upstream;
  const upstreamUrl = upstream.name === 'default' && standIn && upstream.url === STAND_IN_UPSTREAM ? 'AUTHGATE_UPSTREAM_URL (unset here)' : upstream.url;
  io.stdout(`${request}: forwarded`);
  io.stdout(`  route        ${route.id} (${route.match} ${route.path})`);
  io.stdout(`  credentials  ${credentialsOf(route)}`);
  if (route.credentials.kind === 'bearer') issuerLines(table, route.credentials.issuers).forEach((line, i) => io.stdout(`  ${i === 0 ? 'issuers    ' : '           '}  ${line}`));
  io.stdout(`  scope        ${scope === null ? 'none (public route)' : scope.name}`);
  io.stdout(`  upstream     ${upstream.name}: ${upstreamUrl}, as ${upstream.basePath}${path} (timeout ${upstream.timeoutMs} ms)`);
  if (scope !== null && table.plans.size > 0) io.stdout(`  plans        ${plansAllowing(table, scope)}`);
  if (route.cost !== 1) io.stdout(`  cost         ${route.cost} quota units a request`);
  if (route.rateLimit !== undefined) {
    io.stdout(`  rate limit   ${route.rateLimit.count}/${route.rateLimit.windowSeconds}s per ${route.credentials.kind === 'none' ? 'client address' : 'credential'} on this route, on top of the credential's own`);
  }
  io.stdout(`  table        ${source}`);
  return 0;
}

/** Which plans may call a route's method (issue 47): those whose scopes include its scope. */
function plansAllowing(table: RouteTable, rule: ScopeRule): string {
  const allowing = [...table.plans.values()].filter((plan) => planAllows(plan, rule)).map((plan) => (plan === table.defaultPlan ? `${plan.name} (default)` : plan.name));
  const none = table.defaultPlan === undefined ? '; organizations without a plan: every scope' : '';
  return allowing.length === 0 ? `none of the file's plans include ${rule.name}${none}` : `${allowing.join(', ')}${none}`;
}

/**
 * Issue 49: which issuer verifies a provider token on this route (the one whose `issuer` is the
 * token's `iss`), with what it checks and how it finds the organization, one line each.
 */
function issuerLines(table: RouteTable, names: ReadonlySet<string>): string[] {
  return [...names].map((name) => {
    const issuer = table.issuers.get(name)!; // compile.ts refuses a route naming an undeclared issuer
    const keys = issuer.jwksUri ?? `by discovery at ${issuer.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    const checks = [`aud ${issuer.audiences.join(' or ')}`, `alg ${issuer.algorithms.join(' or ')}`, ...(issuer.requireType === undefined ? [] : [`typ ${issuer.requireType}`])];
    const organization = 'fixed' in issuer.organization ? `${issuer.organization.fixed} for every token` : `its external id in claim ${issuer.organization.claim}`;
    return `${name}: tokens with iss ${issuer.issuer} (keys ${keys}), ${checks.join(', ')}; organization: ${organization}; scopes: ${issuer.scopeClaims.join(', then ')}${issuer.scopeMap.size > 0 ? ', renamed by scopeMap' : ''}`;
  });
}

/** Why route-table/path-reading.ts refuses a path, as explain says it. */
const REFUSALS: Readonly<Record<PathRefusal, string>> = {
  path_parameter: 'a ";" path parameter, which Tomcat, Jetty and Spring drop before routing (paths.parameters: strip matches without them)',
  empty_path_segment: 'an empty segment ("//"), which nginx and Tomcat merge (paths.emptySegments: merge matches them merged)',
  path_variant_weaker: 'its letter-case or trailing-slash spelling is a route that asks less than the route of the path as sent',
};

function credentialsOf(route: CompiledRoute): string {
  const { credentials } = route;
  if (credentials.kind === 'none') return 'none: public (no credential; Authorization and identity headers stripped)';
  return [credentials.loginToken && 'login_token', credentials.apiKey && 'api_key', ...[...credentials.issuers].map((name) => `issuer:${name}`)].filter(Boolean).join(', ');
}

function parse(args: readonly string[], io: RoutesIo): { positionals: string[]; file: string | undefined } | undefined {
  try {
    const { values, positionals } = parseArgs({ args: [...args], options: { file: { type: 'string' } }, allowPositionals: true, strict: true });
    return { positionals, file: values.file };
  } catch (error) {
    usage(io, error instanceof Error ? error.message.split('\n', 1)[0]! : 'bad arguments');
    return undefined;
  }
}

/** What the environment gives the file, read as the gateway reads these settings; a setting that is unset or refused gives a stand-in. */
function contextOf(env: RoutesIo['env']): { context: LoadContext; standIn: boolean } {
  const value = (name: SettingName): string | number | undefined => {
    const raw = nonBlank(env[name]);
    if (raw === undefined) return undefined;
    const parsed = parseKind(settingSpec(name).type, raw.trim());
    return parsed.ok ? (parsed.value as string | number) : undefined;
  };
  const url = value('AUTHGATE_UPSTREAM_URL');
  const timeout = value('AUTHGATE_UPSTREAM_TIMEOUT_MS');
  const audience = env.AUTHGATE_IDENTITY_ASSERTION?.trim() === 'off' ? undefined : value('AUTHGATE_IDENTITY_AUDIENCE');
  return {
    context: {
      defaultUpstreamUrl: typeof url === 'string' ? url : STAND_IN_UPSTREAM,
      upstreamTimeoutMs: typeof timeout === 'number' ? timeout : Number(settingSpec('AUTHGATE_UPSTREAM_TIMEOUT_MS').default),
      defaultAudience: typeof audience === 'string' ? audience : undefined,
    },
    standIn: typeof url !== 'string',
  };
}

function usage(io: RoutesIo, message: string): number {
  io.stderr(`authgate: ${message}`);
  io.stderr(`Run 'authgate --help' for usage.`);
  return 2;
}

function nonBlank(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

/** An argument as it may be echoed: one line, bounded. */
function printable(value: string): string {
  return value.replace(/[\u0000-\u001f\u007f]/g, '?').slice(0, 200);
}
