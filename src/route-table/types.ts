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
  /** Quota units one request on this route spends (issue 47); absent: 1. */
  cost?: number;
}>;

/** The period a plan's quota counts over: a UTC calendar day or month. */
export const QUOTA_PERIODS = ['day', 'month'] as const;
export type QuotaPeriod = (typeof QUOTA_PERIODS)[number];

/** A plan as the file says it (issue 47; docs/routes.md "Plans"). */
export type PlanSpec = Readonly<{
  description?: string;
  /** The most an organization on this plan can use: declared scopes, or `all` (every declared scope). */
  scopes: readonly string[] | 'all';
  /** `N/Ws`: each credential's default on forwarded routes (an admin override of the organization wins). */
  rateLimit?: string;
  /** Requests per organization (all its credentials together) per UTC day or month. */
  quota?: Readonly<{ requests: number; per: QuotaPeriod }>;
  /** API keys an organization on this plan may hold (AUTHGATE_MAX_KEYS_PER_ORGANIZATION otherwise). */
  maxKeys?: number;
}>;

/**
 * How the upstreams read what authgate refuses by default (docs/routes.md, "Paths an upstream
 * reads otherwise"): `;` path parameters (`strip`: Tomcat, Jetty and Spring match without them)
 * and empty segments (`merge`: nginx's merge_slashes). Said only when every upstream reads them so.
 */
export type PathsSpec = Readonly<{
  /** Absent: `refuse`. */
  parameters?: 'refuse' | 'strip';
  /** Absent: `refuse`. */
  emptySegments?: 'refuse' | 'merge';
}>;

export type RoutesFile = Readonly<{
  version: 1;
  upstreams?: Readonly<Record<string, UpstreamSpec>>;
  scopes?: Readonly<Record<string, string>>;
  issuers?: Readonly<Record<string, IssuerSpec>>;
  plans?: Readonly<Record<string, PlanSpec>>;
  /** The plan of organizations without one of their own; absent: every scope, no quota. */
  defaultPlan?: string;
  routes: readonly RouteSpec[];
  paths?: PathsSpec;
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
  /** Quota units one request spends (the file's `cost`, 1 unless set). */
  cost: number;
}>;

/**
 * A plan compiled against its table's scopes (plans/plan.ts): what an organization on it may
 * hold. The built-in keys:read and keys:write are in every plan (they guard the gateway's own
 * key routes, which every organization needs).
 */
export type CompiledPlan = Readonly<{
  name: string;
  description: string | undefined;
  /** The declared names the plan allows, in table order (built-in ones included). */
  scopeNames: readonly string[];
  /** Whether the plan said `all`. */
  all: boolean;
  /** The allowed scopes' bits in the table's ScopeTable: `bits[rule.word] & rule.mask`. */
  bits: Int32Array;
  rateLimit: RateLimit | undefined;
  quota: Readonly<{ requests: number; per: QuotaPeriod }> | undefined;
  maxKeys: number | undefined;
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
  /** The file's plans by name (empty: no plans, every organization may hold every scope). */
  plans: ReadonlyMap<string, CompiledPlan>;
  /** The plan of an organization without one (or whose plan the file no longer has); undefined: no restriction. */
  defaultPlan: CompiledPlan | undefined;
  /** The route a path (already through the path guard, without its query) belongs to; undefined also when read() refuses it. */
  match(path: string): CompiledRoute | undefined;
  /** The route a path belongs to, or why no route may decide it (route-table/path-reading.ts). */
  read(path: string): PathReading;
}>;

/**
 * Why a path is refused before any route decides it: a `;` path parameter, an empty segment, or
 * a spelling (letter case, a trailing slash) an upstream may read as a route that asks more than
 * the route authgate reads it as, while that route's own reading asks less.
 */
export type PathRefusal = 'path_parameter' | 'empty_path_segment' | 'path_variant_weaker';

export type PathReading = Readonly<{ route: CompiledRoute; refusal?: undefined }> | Readonly<{ route?: undefined; refusal?: PathRefusal }>;

/** Where the request paths read the live table from: a reload swaps it. */
export type RouteTableSource = Readonly<{
  current(): RouteTable;
}>;

/** One thing wrong with a file: where (a JSON pointer into it) and what. */
export type RouteFileError = Readonly<{ pointer: string; message: string }>;
