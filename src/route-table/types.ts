/**
 * The route table: which requests the gateway forwards, to which upstream, with which credentials
 * and scopes. Two forms of it live here:
 * - the file's (RoutesFile: AUTHGATE_ROUTES_FILE as parsed and checked against the schema), the
 *   contract operators write (issue 28; docs/routes.md);
 * - the compiled one (RouteTable), immutable, that both request paths read (the fast lane and the
 *   framework's catch-all): one reference, swapped whole on a reload, so a request keeps the
 *   route it matched.
 */
import type { RateLimit } from '../limits/rate-limit.js';
import type { ScopeRule, ScopeTable } from '../authz/scopes.js';
import type { CompiledIssuer, IssuerSpec } from '../issuers/types.js';

/** The methods a file may list. HEAD goes with GET and is never listed. */
export const ROUTE_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
export type RouteMethod = (typeof ROUTE_METHODS)[number];

/** The credential kinds a route can take, as the file names them. */
export const CREDENTIAL_KINDS = ['login_token', 'api_key'] as const;
/** A kind, or `issuer:NAME`: the JWT access tokens of an issuer declared under `issuers` (issue 49). */
export type RouteCredential = (typeof CREDENTIAL_KINDS)[number] | `issuer:${string}`;
export const ISSUER_CREDENTIAL_PREFIX = 'issuer:';

/** The gateway's own paths: no route may be one of them or below one, and a `/` subtree never takes them. */
export const RESERVED_PREFIXES = ['/auth', '/.well-known', '/console'] as const;

/** The method value of a public route (`credentials: none`). */
export const PUBLIC = 'public';

export type UpstreamSpec = Readonly<{
  /** Absolute http(s) URL, with an optional base path; `default` may omit it (AUTHGATE_UPSTREAM_URL). */
  url?: string;
  /** Headers and body timeout of each request, ms; AUTHGATE_UPSTREAM_TIMEOUT_MS unless set. */
  timeoutMs?: number;
  /** The identity assertion's `aud` for this upstream; its URL's origin unless set (or AUTHGATE_IDENTITY_AUDIENCE for `default`). */
  audience?: string;
}>;

export type RouteSpec = Readonly<{
  id: string;
  path: string;
  match: 'exact' | 'subtree';
  /** Absent: both kinds. */
  credentials?: readonly RouteCredential[] | 'none';
  methods: Readonly<Partial<Record<RouteMethod, string>>>;
  /** Absent: `default`. */
  upstream?: string;
  /** `N/Ws` per credential (per client address on a public route), on this route, on top of the credential's own. */
  rateLimit?: string;
  /** The id of the route this one is nested under and asks less of, said on purpose. */
  weakens?: string;
}>;

export type RoutesFile = Readonly<{
  version: 1;
  upstreams?: Readonly<Record<string, UpstreamSpec>>;
  scopes?: Readonly<Record<string, string>>;
  issuers?: Readonly<Record<string, IssuerSpec>>;
  routes: readonly RouteSpec[];
}>;

export type CompiledUpstream = Readonly<{
  name: string;
  /** As configured (with base path). */
  url: string;
  origin: string;
  /** The URL's path without trailing slashes ('' for none): put in front of every forwarded path. */
  basePath: string;
  /** The Host header the upstream gets. */
  host: string;
  timeoutMs: number;
  audience: string;
}>;

/** What a route needs of a request's credential. */
export type RouteCredentials =
  | Readonly<{ kind: 'none' }>
  | Readonly<{ kind: 'bearer'; loginToken: boolean; apiKey: boolean; /** The names of the issuers whose tokens it takes (issue 49). */ issuers: ReadonlySet<string> }>;

export type CompiledRoute = Readonly<{
  id: string;
  path: string;
  match: 'exact' | 'subtree';
  /** The metrics' and access line's `route` label: the path, and `/*` after a subtree's. */
  label: string;
  credentials: RouteCredentials;
  /**
   * Each method forwarded (HEAD included where GET is), with the scope it needs compiled against
   * this table's scopes (null on a public route).
   */
  methods: ReadonlyMap<string, ScopeRule | null>;
  /** The `Allow` header of a 405 on this route. */
  allow: string;
  upstream: CompiledUpstream;
  rateLimit: RateLimit | undefined;
}>;

export type RouteTable = Readonly<{
  /** sha256 (hex, first 16 characters) of the canonical JSON of the compiled file: equal tables, equal hashes. */
  hash: string;
  /** Where it came from: the file's path, or undefined for the built-in table. */
  source: string | undefined;
  routes: readonly CompiledRoute[];
  upstreams: ReadonlyMap<string, CompiledUpstream>;
  scopes: ScopeTable;
  /** The trusted issuers (issue 49) by name. */
  issuers: ReadonlyMap<string, CompiledIssuer>;
  /** The route a path (already through the path guard, without its query) belongs to. */
  match(path: string): CompiledRoute | undefined;
}>;

/** Where the request paths read the live table from: a reload swaps it. */
export type RouteTableSource = Readonly<{
  current(): RouteTable;
}>;

/** One thing wrong with a file: where (a JSON pointer into it) and what. */
export type RouteFileError = Readonly<{ pointer: string; message: string }>;
