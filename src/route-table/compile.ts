/**
 * A routes file (already through the schema: route-table/schema.ts) compiled into the immutable
 * table both request paths read, or every reason it cannot be: what the schema cannot say
 * (references between parts, paths, nesting). Each error names its place as a JSON pointer
 * into the file, which the loader turns into a line.
 */
import { createHash } from 'node:crypto';
import { isScopeName, ScopeTable, BUILTIN_SCOPES } from '../authz/scopes.js';
import { parseRateLimit, RATE_LIMIT_FORM } from '../limits/rate-limit.js';
import { compileIssuers, routeIntrospectionProblem } from '../issuers/compile.js';
import { isWithin } from './match.js';
import { asksLess, createPathReader, foldedKey } from './path-reading.js';
import { compilePlans } from './plans.js';
import { PUBLIC, type CompiledRoute, type CompiledUpstream, type RouteCredentials, type RouteFileError, type RoutesFile, type RouteSpec, type RouteTable, type UpstreamSpec, RESERVED_PREFIXES, ISSUER_CREDENTIAL_PREFIX } from './types.js';

/** What the file leaves to the environment. */
export type CompileContext = Readonly<{
  /** AUTHGATE_UPSTREAM_URL: the `default` upstream's URL unless the file gives one. */
  defaultUpstreamUrl: string;
  /** AUTHGATE_UPSTREAM_TIMEOUT_MS: every upstream's unless it sets its own. */
  upstreamTimeoutMs: number;
  /** AUTHGATE_IDENTITY_AUDIENCE, if set: the `default` upstream's `aud` unless the file gives one. */
  defaultAudience: string | undefined;
  /** The file's path (undefined: the built-in table). */
  source: string | undefined;
}>;

export type CompileResult = { ok: true; table: RouteTable } | { ok: false; errors: RouteFileError[] };


/** What a file path may be: `/`, or `/`-separated non-empty segments of URL path characters, no dot segments, no trailing `/`. */
const PATH_SEGMENT = /^[A-Za-z0-9\-_~!$&'()*+,=:@.]+$/;

export function pathProblem(path: string): string | undefined {
  if (path === '/') return undefined;
  if (!path.startsWith('/')) return 'must start with /';
  if (path.endsWith('/')) return 'must not end with / (a subtree already holds the paths below it)';
  if (path.length > 200) return 'longer than 200 characters';
  for (const segment of path.slice(1).split('/')) {
    if (segment === '') return 'must not hold an empty segment (//)';
    if (segment === '.' || segment === '..') return 'must not hold a dot segment';
    if (!PATH_SEGMENT.test(segment) || segment.includes('*')) return 'may hold only letters, digits and - _ ~ ! $ & \' ( ) + , = : @ . (no %, *, {, ;, ?, #, \\)';
  }
  return undefined;
}


export function compileRoutes(file: RoutesFile, context: CompileContext): CompileResult {
  const errors: RouteFileError[] = [];
  const fail = (pointer: string, message: string) => errors.push({ pointer, message });

  // Scopes: the file's, valid names, not the built-in ones again.
  const declared = new Map<string, string>();
  for (const [name, description] of Object.entries(file.scopes ?? {})) {
    const at = `/scopes/${escapePointer(name)}`;
    if (!isScopeName(name)) fail(at, `scope name "${name}" is not resource:action (lower-case letters, digits, _ and -; e.g. invoices:read)`);
    else if ((BUILTIN_SCOPES as readonly string[]).includes(name)) fail(at, `scope ${name} is built in and may not be declared again`);
    else declared.set(name, description);
  }
  const scopes = new ScopeTable(declared);
  const issuers = compileIssuers(file.issuers, scopes, fail, context.source);
  const { plans, defaultPlan } = compilePlans(file, scopes, fail);

  // Upstreams: `default` may take its URL from the environment; every other names its own.
  const upstreams = new Map<string, CompiledUpstream>();
  const specs: Record<string, UpstreamSpec> = { default: {}, ...file.upstreams };
  for (const [name, spec] of Object.entries(specs)) {
    const at = `/upstreams/${escapePointer(name)}`;
    const url = spec.url ?? (name === 'default' ? context.defaultUpstreamUrl : undefined);
    if (url === undefined) {
      fail(at, `upstream ${name} has no url (only default takes AUTHGATE_UPSTREAM_URL)`);
      continue;
    }
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      // Never the URL itself in an error: it may carry a password (refused just below, unechoed).
      fail(`${at}/url`, 'is not an absolute http(s) URL');
      continue;
    }
    if ((parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.search !== '' || parsed.hash !== '' || parsed.username !== '' || parsed.password !== '') {
      fail(`${at}/url`, 'must be http(s), without credentials, query or fragment');
      continue;
    }
    const defaultAudience = name === 'default' ? context.defaultAudience : undefined;
    upstreams.set(name, {
      name,
      url,
      origin: parsed.origin,
      basePath: parsed.pathname.replace(/\/+$/, ''),
      host: parsed.host,
      timeoutMs: spec.timeoutMs ?? context.upstreamTimeoutMs,
      audience: spec.audience ?? defaultAudience ?? parsed.origin,
    });
  }

  const ids = new Map<string, number>();
  const places = new Map<string, number>();
  const spellings = new Map<string, { path: string; index: number }>();
  const compiled: CompiledRoute[] = [];
  file.routes.forEach((route, i) => {
    const at = `/routes/${i}`;
    const before = errors.length;
    if (ids.has(route.id)) fail(`${at}/id`, `route id ${route.id} is also route ${ids.get(route.id)}'s`);
    else ids.set(route.id, i);
    const problem = pathProblem(route.path);
    if (problem !== undefined) fail(`${at}/path`, `path "${route.path}" ${problem}`);
    const reserved = RESERVED_PREFIXES.find((prefix) => isWithin(route.path, prefix));
    if (reserved !== undefined) fail(`${at}/path`, `path ${route.path} is the gateway's own (${reserved} and below)`);
    const place = `${route.match} ${route.path}`;
    // Letter case: `/Admin` and `/admin` are one path to a case-insensitive upstream (Express,
    // ASP.NET Core), and path-reading.ts finds a spelling's route by its lower case.
    const spelled = spellings.get(foldedKey(route.path));
    if (places.has(place)) fail(`${at}/path`, `route ${places.get(place)} already has ${route.match} ${route.path}`);
    else if (spelled !== undefined && spelled.path !== route.path) fail(`${at}/path`, `path ${route.path} differs from route ${spelled.index}'s ${spelled.path} only in letter case, and a case-insensitive upstream reads them as one`);
    else places.set(place, i);
    if (spelled === undefined) spellings.set(foldedKey(route.path), { path: route.path, index: i });
    const upstream = upstreams.get(route.upstream ?? 'default');
    // An upstream that is declared but wrong has its own error already: not one more per route.
    const upstreamAt = `/upstreams/${escapePointer(route.upstream ?? 'default')}`;
    if (upstream === undefined && !errors.some((e) => e.pointer === upstreamAt || e.pointer.startsWith(`${upstreamAt}/`))) {
      fail(`${at}/upstream`, `upstream ${route.upstream} is not declared under upstreams`);
    }
    const isPublic = route.credentials === 'none';
    const methods = new Map<string, ReturnType<ScopeTable['rule']> | null>();
    for (const [method, scope] of Object.entries(route.methods)) {
      const where = `${at}/methods/${method}`;
      if (isPublic) {
        if (scope !== PUBLIC) fail(where, `a public route (credentials: none) takes "public" for every method, not ${scope}`);
        else methods.set(method, null);
      } else if (scope === PUBLIC) fail(where, `"public" needs credentials: none on the route`);
      else if (!scopes.has(scope)) fail(where, `scope ${scope} is not declared under scopes`);
      else methods.set(method, scopes.rule(scope));
    }
    if (Object.keys(route.methods).length === 0) fail(`${at}/methods`, 'a route forwards at least one method');
    if (Array.isArray(route.credentials)) {
      route.credentials.forEach((kind, k) => {
        const name = issuerNameOf(kind);
        if (name !== undefined && file.issuers?.[name] === undefined) fail(`${at}/credentials/${k}`, `issuer ${name} is not declared under issuers`);
      });
      const opaque = routeIntrospectionProblem(route.credentials.map(issuerNameOf).filter((name) => name !== undefined), file.issuers);
      if (opaque !== undefined) fail(`${at}/credentials`, opaque);
    }
    let rateLimit;
    if (route.rateLimit !== undefined) {
      rateLimit = parseRateLimit(route.rateLimit);
      if (rateLimit === undefined) fail(`${at}/rateLimit`, `"${route.rateLimit}" is not ${RATE_LIMIT_FORM}`);
    }
    if (errors.length > before || upstream === undefined) return;
    if (methods.has('GET')) methods.set('HEAD', methods.get('GET')!);
    compiled.push({
      id: route.id,
      path: route.path,
      match: route.match,
      label: route.match === 'subtree' ? (route.path === '/' ? '/*' : `${route.path}/*`) : route.path,
      credentials: credentialsOf(route),
      methods,
      allow: [...methods.keys()].join(', '),
      upstream,
      rateLimit,
      cost: route.cost ?? 1,
    });
  });

  // Nesting: a route may not ask for less than the route it sits in (the deepest subtree above
  // it) unless it says so (`weakens: <id>`): Oathkeeper meets such overlaps at request time, with a 500.
  for (const inner of compiled) {
    const i = ids.get(inner.id)!;
    let parent: CompiledRoute | undefined;
    for (const outer of compiled) {
      if (outer === inner || outer.match !== 'subtree' || !isWithin(inner.path, outer.path)) continue;
      if (inner.path === outer.path && inner.match === 'subtree') continue;
      if (parent === undefined || outer.path.length > parent.path.length) parent = outer;
    }
    if (parent === undefined || !asksLess(inner.credentials, parent.credentials) || file.routes[i]!.weakens === parent.id) continue;
    fail(`/routes/${i}`, `route ${inner.id} (${inner.path}) is under route ${parent.id} (${parent.path}) and takes credentials it does not (${describeCredentials(inner.credentials)} against ${describeCredentials(parent.credentials)}); if that is meant, add weakens: ${parent.id}`);
  }
  file.routes.forEach((route, i) => {
    if (route.weakens === undefined) return;
    const outer = compiled.find((r) => r.id === route.weakens);
    // An exact route sits in a subtree of its own path (the nesting check above names that one as its parent).
    if (outer === undefined || outer.match !== 'subtree' || !isWithin(route.path, outer.path) || (outer.path === route.path && route.match === 'subtree')) {
      fail(`/routes/${i}/weakens`, `weakens names ${route.weakens}, which is no subtree route above ${route.path}`);
    }
  });

  if (errors.length > 0) return { ok: false, errors };
  // An introspection client secret is read from its own file: its digest makes a rotated one a changed table, which a reload applies.
  const secrets = [...issuers.values()].map((issuer) => issuer.introspection?.clientSecret.fingerprint ?? null);
  const hash = createHash('sha256').update(canonicalJson({ file, upstreams: [...upstreams.values()], ...(secrets.some((s) => s !== null) && { secrets }) })).digest('hex').slice(0, 16);
  const { read, match } = createPathReader(compiled, file.paths);
  return { ok: true, table: { hash, source: context.source, routes: compiled, upstreams, scopes, plans, defaultPlan, issuers, match, read } };
}

function credentialsOf(route: RouteSpec): RouteCredentials {
  if (route.credentials === 'none') return { kind: 'none' };
  const kinds = route.credentials ?? ['login_token', 'api_key'];
  const issuers = new Set(kinds.map(issuerNameOf).filter((name) => name !== undefined));
  return { kind: 'bearer', loginToken: kinds.includes('login_token'), apiKey: kinds.includes('api_key'), issuers };
}

function issuerNameOf(kind: string): string | undefined {
  return kind.startsWith(ISSUER_CREDENTIAL_PREFIX) ? kind.slice(ISSUER_CREDENTIAL_PREFIX.length) : undefined;
}

/** A route's credentials as the file spells them, for messages (compile's, warnings.ts's). */
export function describeCredentials(credentials: RouteCredentials): string {
  if (credentials.kind === 'none') return 'none';
  return [credentials.loginToken && 'login_token', credentials.apiKey && 'api_key', ...[...credentials.issuers].map((name) => `${ISSUER_CREDENTIAL_PREFIX}${name}`)].filter(Boolean).join(', ');
}

export function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** JSON with object keys sorted, so equal content hashes equal however the file ordered its keys. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
