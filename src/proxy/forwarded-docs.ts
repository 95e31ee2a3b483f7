/**
 * The route table's routes in the public OpenAPI document. The framework's path is one catch-all
 * route (proxy/forward.ts), hidden from the document; the table's routes are documented as the
 * forwarded routes always were: each as operations of its path (and of `<path>/{path}` for a
 * subtree), one schema per scope, built by @fastify/swagger with the public document's own options
 * on a scratch instance that is never started, so they read exactly as the gateway's own routes do.
 * Built at start and again for each table swapped in; the ops port serves the latest.
 */
import Fastify, { type FastifySchema } from 'fastify';
import swagger from '@fastify/swagger';
import { publicDocumentOptions, UPSTREAM_TAG } from '../http/openapi.js';
import type { LiveRouteTable } from '../route-table/live.js';
import type { CompiledRoute, RouteTable } from '../route-table/types.js';
import '../http/request-context.js';

type Paths = Record<string, unknown>;
type Document = { paths?: Paths };

export type ForwardedDocs = Readonly<{
  /** The public document with the live table's routes in it (the document itself is not changed). */
  complete(document: unknown): unknown;
  /** Resolves once the document of the table live now is built. */
  ready(): Promise<void>;
}>;

export function createForwardedDocs(routes: Pick<LiveRouteTable, 'current' | 'onSwap'>, onError: (error: unknown) => void): ForwardedDocs {
  let paths: Paths = {};
  let building = build(routes.current());
  function build(table: RouteTable): Promise<void> {
    return pathsOf(table).then(
      (built) => {
        if (routes.current() === table) paths = built;
      },
      onError,
    );
  }
  routes.onSwap((table) => {
    building = build(table);
  });
  return {
    complete(document) {
      const doc = document as Document;
      return { ...doc, paths: { ...doc.paths, ...paths } };
    },
    ready: () => building,
  };
}

async function pathsOf(table: RouteTable): Promise<Paths> {
  const scratch = Fastify({ routerOptions: { caseSensitive: true, ignoreTrailingSlash: false, ignoreDuplicateSlashes: false } });
  await scratch.register(swagger, publicDocumentOptions());
  for (const route of table.routes) {
    // One operation per scope: the methods needing the same scope share it, as they always did.
    const methodsByScope = new Map<string, string[]>();
    for (const [method, rule] of route.methods) {
      if (method === 'HEAD') continue; // fastify adds HEAD beside GET, as the document always showed it
      const scope = rule?.name ?? 'public';
      methodsByScope.set(scope, [...(methodsByScope.get(scope) ?? []), method]);
    }
    const urls = route.match === 'subtree' ? (route.path === '/' ? ['/', '/*'] : [route.path, `${route.path}/*`]) : [route.path];
    for (const url of urls) {
      for (const [scope, methods] of methodsByScope) {
        scratch.route({
          method: methods,
          url,
          config: { auth: authOf(route), ...(route.credentials.kind === 'bearer' && { scope }) },
          schema: describeForwardedRoute(route, url !== route.path, scope),
          handler: async () => undefined,
        });
      }
    }
  }
  await scratch.ready();
  const document = scratch.swagger() as Document;
  await scratch.close();
  return document.paths ?? {};
}

/** What http/openapi.ts reads of a route's requirement (`config.auth`) to list its refusals. */
function authOf(route: CompiledRoute): 'none' | 'any' | 'login-token' {
  if (route.credentials.kind === 'none') return 'none';
  return route.credentials.apiKey || route.credentials.issuers.size > 0 ? 'any' : 'login-token';
}

/** A forwarded route as its OpenAPI operations show it: what the upstream's user calls. */
function describeForwardedRoute(route: CompiledRoute, below: boolean, scope: string): FastifySchema {
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
    tags: [UPSTREAM_TAG],
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
