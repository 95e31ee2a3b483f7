/**
 * The route table's routes in the public OpenAPI document. The framework's path is one catch-all
 * route (proxy/forward.ts), hidden from the document; the table's routes are documented as the
 * forwarded routes always were: each as operations of its path (and of `<path>/{path}` for a
 * subtree), one per method, read as the gateway's own routes are (openapi/document.ts
 * forwardedOperation).
 *
 * The paths are assembled here directly from the compiled table, never by registering the routes
 * on a framework: any valid file must be documented, and a file is not a set of fastify routes
 * (an exact route and a subtree on one path, issue 46, were a duplicate route to fastify; a `:` in
 * a path its parameter). Each path shows the route that holds it, as the matcher decides
 * (route-table/match.ts): an exact route wins its own path over a subtree on the same one.
 *
 * Built at start and again, synchronously, for each table swapped in, so the document always
 * describes the live table. Should that ever fail, the document lists no forwarded route (never
 * the previous table's), and status() says so: /readyz's detail and authgate_openapi_documented.
 */
import { forwardedOperation, operationIdOf, type ForwardedAuth } from '../openapi/document.js';
import type { LiveRouteTable } from '../route-table/live.js';
import type { CompiledRoute, RouteTable } from '../route-table/types.js';

type Paths = Record<string, Record<string, unknown>>;
type Document = { paths?: Paths };

/** Whether the document describes the live table (by its hash), and why not when it does not. */
export type DocumentStatus = Readonly<{ hash: string; documented: true } | { hash: string; documented: false; error: string }>;

export type ForwardedDocs = Readonly<{
  /** The public document with the live table's routes in it (the document itself is not changed). */
  complete(document: unknown): unknown;
  status(): DocumentStatus;
}>;

export type ForwardedDocsOptions = Readonly<{
  /** Told of a table that could not be documented (the gateway logs routes.openapi_failed). */
  onError(error: unknown, table: RouteTable): void;
  /** How a table's paths are made: describeTable, unless a test hands in one that fails. */
  describe?: (table: RouteTable) => Paths;
}>;

export function createForwardedDocs(routes: Pick<LiveRouteTable, 'current' | 'onSwap'>, options: ForwardedDocsOptions): ForwardedDocs {
  const describe = options.describe ?? describeTable;
  let paths: Paths = {};
  let status: DocumentStatus;
  const build = (table: RouteTable) => {
    try {
      paths = describe(table);
      status = { hash: table.hash, documented: true };
    } catch (error) {
      paths = {};
      status = { hash: table.hash, documented: false, error: error instanceof Error ? error.message : String(error) };
      options.onError(error, table);
    }
  };
  build(routes.current());
  routes.onSwap((table) => build(table));
  // One completed document per (gateway document, paths): the scoped document (openapi/scopes.ts)
  // is made again only when this one changes.
  let made: { source: unknown; paths: Paths; document: unknown } | undefined;
  return {
    complete(document) {
      if (made === undefined || made.source !== document || made.paths !== paths) {
        const doc = document as Document;
        made = { source: document, paths, document: { ...doc, paths: { ...doc.paths, ...besideOwn(doc.paths ?? {}, paths) } } };
      }
      return made.document;
    },
    status: () => status,
  };
}

type Operation = { operationId?: string };
const idsOf = (paths: Paths) => Object.values(paths).flatMap((operations) => Object.values(operations).map((operation) => (operation as Operation).operationId));

/**
 * The forwarded paths with no operationId the gateway's own operations have (`GET /api/key` would
 * be `getApiKey`, as `GET /auth/api-key/{id}` is): such a one gets a number after it.
 */
function besideOwn(own: Paths, forwarded: Paths): Paths {
  const ownIds = new Set(idsOf(own));
  if (!idsOf(forwarded).some((id) => ownIds.has(id))) return forwarded;
  const taken = new Set([...ownIds, ...idsOf(forwarded)]);
  const rename = (operation: unknown) => {
    const id = (operation as Operation).operationId;
    if (id === undefined || !ownIds.has(id)) return operation;
    let unique = id;
    for (let n = 2; taken.has(unique); n++) unique = `${id}${n}`;
    taken.add(unique);
    return { ...(operation as object), operationId: unique };
  };
  return Object.fromEntries(Object.entries(forwarded).map(([path, operations]) => [path, Object.fromEntries(Object.entries(operations).map(([method, operation]) => [method, rename(operation)]))]));
}

/** The OpenAPI methods of a route, in the order the document lists them; HEAD goes with GET, as it always showed. */
const DOCUMENTED_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** The table's paths: each path with the operations of the route that holds it. */
export function describeTable(table: RouteTable): Paths {
  const exactPaths = new Set(table.routes.filter((route) => route.match === 'exact').map((route) => route.path));
  const paths: Paths = {};
  const ids = new Set<string>();
  const uniqueId = (id: string) => {
    let unique = id;
    for (let n = 2; ids.has(unique); n++) unique = `${id}${n}`;
    ids.add(unique);
    return unique;
  };
  for (const route of table.routes) {
    const below = route.path === '/' ? '/{path}' : `${route.path}/{path}`;
    // A subtree's own path belongs to an exact route on it, when there is one (the matcher's rule).
    const templates: [string, boolean][] =
      route.match === 'exact' ? [[route.path, false]] : exactPaths.has(route.path) ? [[below, true]] : [[route.path, false], [below, true]];
    for (const [path, isBelow] of templates) {
      const operations: Record<string, unknown> = {};
      for (const method of DOCUMENTED_METHODS) {
        const rule = route.methods.get(method);
        if (rule === undefined) continue;
        const scope = rule?.name;
        operations[method.toLowerCase()] = forwardedOperation(
          { ...describeForwardedRoute(route, isBelow, scope), operationId: uniqueId(operationIdOf(method, path)) },
          authOf(route),
          isBelow,
        );
      }
      paths[path] = operations;
    }
  }
  return paths;
}

/** What openapi/document.ts reads of a route's requirement to list its refusals. */
function authOf(route: CompiledRoute): ForwardedAuth {
  if (route.credentials.kind === 'none') return 'none';
  return route.credentials.apiKey || route.credentials.issuers.size > 0 ? 'any' : 'login-token';
}

/** A forwarded route as its OpenAPI operations show it: what the upstream's user calls. */
function describeForwardedRoute(route: CompiledRoute, below: boolean, scope: string | undefined): { summary: string; description: string } {
  const credentials = route.credentials;
  const issuers = credentials.kind === 'none' || credentials.issuers.size === 0 ? '' : ` or an access token of ${[...credentials.issuers].join(', ')} holding it`;
  const credential =
    credentials.kind === 'none'
      ? undefined
      : !credentials.apiKey && issuers === ''
        ? 'a login token'
        : !credentials.apiKey
          ? `${credentials.loginToken ? 'a login token, ' : ''}an access token of ${[...credentials.issuers].join(', ')} with the scope \`${scope}\``
          : !credentials.loginToken
            ? `an API key with the scope \`${scope}\`${issuers}`
            : `a login token or an API key with the scope \`${scope}\`${issuers}`;
  const upstream = route.upstream.name === 'default' ? 'the upstream' : `the upstream ${route.upstream.name}`;
  return {
    summary: below ? `Forwarded to ${upstream}: any path below ${route.path}` : `Forwarded to ${upstream}: ${route.path}`,
    description:
      (credential === undefined
        ? 'Public: needs no credential (an `Authorization` header is not read, and never forwarded). The request goes to the upstream service with its path and query as they came, ' +
          'its body streamed as it is, with `x-request-id` and `x-forwarded-for`/`-proto`/`-host` set by the gateway and any client-sent `x-organization-*` or `x-authgate-*` header removed. Bodies and answers '
        : `Needs ${credential}. The request goes to the upstream service with its path and query as they came, ` +
          'its body streamed as it is, without `Authorization`, and with `x-organization-id` (the organization of the ' +
          'credential), `x-organization-scopes` (its scopes, space-separated), `x-authgate-identity` (a JWT the ' +
          'gateway signs naming the organization, verifiable with `/.well-known/jwks.json`; unless turned off), `x-request-id` and `x-forwarded-for`/`-proto`/`-host` set by the gateway. Bodies and answers ') +
      "are the upstream's own; only the gateway's refusals are problems." +
      (!route.methods.has('OPTIONS')
        ? ''
        : ' An `OPTIONS` with `Origin` and `Access-Control-Request-Method` is a CORS preflight, not this operation: ' +
          'the gateway answers it itself (204, no credential needed, see the API description) and never forwards it.'),
  };
}
