/**
 * The JSON Schema of the routes file (AUTHGATE_ROUTES_FILE; docs/routes.md), in TypeBox so the
 * schema and the RoutesFile type cannot drift apart (`Static` below is checked against it).
 * Every object is closed (`additionalProperties: false`): a misspelt key is an error, never
 * ignored. The schema says everything a file can be checked for on its own (shapes, names, path
 * forms); what needs the whole file (references, duplicates, nesting, reserved paths) is the
 * compiler's (compile.ts). The same schema is published as config/routes.schema.json (a test
 * keeps it current) and served on the ops port (GET /routes.schema.json) for editors and CI.
 */
import { Type, type Static } from '@sinclair/typebox';
import { MAX_SCOPE_NAME_LENGTH, SCOPE_NAME_PATTERN } from '../authz/scopes.js';
import { IssuersSchema, ISSUER_NAME_PATTERN, MAX_ISSUER_NAME_LENGTH } from '../issuers/schema.js';
import { CREDENTIAL_KINDS, PUBLIC, QUOTA_PERIODS, type RouteMethod, type RoutesFile } from './types.js';

/** A route id or an upstream name: it becomes a metrics label and part of rate-limit keys, so it is short and plain. */
export const NAME_PATTERN = '^[a-z0-9][a-z0-9_.-]*$';
export const MAX_NAME_LENGTH = 64;

/**
 * The form of a route's path, as compile.ts's pathProblem() says it in words: `/`, or
 * `/`-separated non-empty segments of URL path characters, no `.` or `..` segment, no trailing
 * `/`, no `%`, `*`, `{`, `;`, `?`, `#` or `\`. (A test holds the two to the same answers.)
 */
export const PATH_PATTERN = "^(?:/|(?:/(?!\\.\\.?(?:/|$))[A-Za-z0-9\\-_~!$&'()+,=:@.]+)+)$";
export const MAX_PATH_LENGTH = 200;

/** `<count>/<window>` (limits/rate-limit.ts); the compiler checks the range. */
export const RATE_LIMIT_PATTERN = '^[1-9][0-9]{0,9}/[1-9][0-9]{0,5}[smh]$';

const name = (what: string) => Type.String({ pattern: NAME_PATTERN, maxLength: MAX_NAME_LENGTH, description: what });
const scopeName = Type.String({ pattern: SCOPE_NAME_PATTERN, maxLength: MAX_SCOPE_NAME_LENGTH });
/** A method's value: the scope it needs, or `public` on a route with `credentials: none`. */
const methodValue = Type.String({ pattern: `^${PUBLIC}$|${SCOPE_NAME_PATTERN}`, maxLength: MAX_SCOPE_NAME_LENGTH });

/** `issuer:NAME`: the access tokens of an issuer declared under `issuers` (issue 49). */
const issuerCredential = Type.Unsafe<`issuer:${string}`>(
  Type.String({ pattern: `^issuer:${ISSUER_NAME_PATTERN.slice(1)}`, maxLength: MAX_ISSUER_NAME_LENGTH + 7 }),
);

const upstream = Type.Object(
  {
    url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'Absolute http(s) URL, with an optional base path put in front of every forwarded path. `default` may leave it out: AUTHGATE_UPSTREAM_URL.' })),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 1, maximum: 600_000, description: 'Headers and body timeout of each request, ms (AUTHGATE_UPSTREAM_TIMEOUT_MS unless set).' })),
    audience: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: "The identity assertion's `aud` for this upstream (its URL's origin unless set)." })),
  },
  { additionalProperties: false },
);

const route = Type.Object(
  {
    id: name('Unique; the route label of rate limits and logs.'),
    path: Type.String({ pattern: PATH_PATTERN, maxLength: MAX_PATH_LENGTH, description: 'Compared as bytes, case-sensitive.' }),
    match: Type.Union([Type.Literal('exact'), Type.Literal('subtree')], { description: '`exact`: this path only. `subtree`: this path and every path below it by segments (never /pathX).' }),
    credentials: Type.Optional(
      Type.Union(
        [
          Type.Array(Type.Union([...CREDENTIAL_KINDS.map((kind) => Type.Literal(kind)), issuerCredential]), { minItems: 1, uniqueItems: true }),
          Type.Literal('none'),
        ],
        { description: 'The credential kinds taken (login_token and api_key unless set; `issuer:NAME` for the tokens of an issuer under `issuers`), or `none` for a public route.' },
      ),
    ),
    methods: Type.Object(
      { GET: Type.Optional(methodValue), POST: Type.Optional(methodValue), PUT: Type.Optional(methodValue), PATCH: Type.Optional(methodValue), DELETE: Type.Optional(methodValue), OPTIONS: Type.Optional(methodValue) } satisfies Record<RouteMethod, unknown>,
      { additionalProperties: false, minProperties: 1, description: 'Each method forwarded, with the scope it needs (`public` on a public route). HEAD goes with GET and is never listed.' },
    ),
    upstream: Type.Optional(name('An upstream declared under `upstreams` (`default` unless set).')),
    rateLimit: Type.Optional(Type.String({ pattern: RATE_LIMIT_PATTERN, description: '`<count>/<window>` (s, m or h) per credential on this route (per client address on a public one), on top of the credential\'s own.' })),
    weakens: Type.Optional(name('The id of the subtree route this one is nested under and asks less of, on purpose.')),
    cost: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'Quota units one request on this route spends (1 unless set; 0: counted against no quota).' })),
  },
  { additionalProperties: false },
);

const plan = Type.Object(
  {
    description: Type.Optional(Type.String({ maxLength: 500 })),
    scopes: Type.Union([Type.Array(scopeName, { uniqueItems: true }), Type.Literal('all')], {
      description: 'The most an organization on this plan can use: declared scopes, or `all` (every declared scope). keys:read and keys:write are in every plan.',
    }),
    rateLimit: Type.Optional(Type.String({ pattern: RATE_LIMIT_PATTERN, description: "`<count>/<window>` (s, m or h): each credential's default on forwarded routes (an organization's admin override wins)." })),
    quota: Type.Optional(
      Type.Object(
        {
          requests: Type.Integer({ minimum: 1, maximum: 1_000_000_000_000, description: 'Quota units per period, all the organization\'s credentials together.' }),
          per: Type.Union(QUOTA_PERIODS.map((period) => Type.Literal(period)), { description: 'The UTC calendar period counted over.' }),
        },
        { additionalProperties: false },
      ),
    ),
    maxKeys: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'API keys an organization on this plan may hold (instead of AUTHGATE_MAX_KEYS_PER_ORGANIZATION).' })),
  },
  { additionalProperties: false },
);

/** The schema of the whole file. */
export const RoutesFileSchema = Type.Object(
  {
    version: Type.Literal(1),
    upstreams: Type.Optional(
      Type.Record(Type.String(), upstream, { additionalProperties: false, propertyNames: { pattern: NAME_PATTERN, maxLength: MAX_NAME_LENGTH } }),
    ),
    scopes: Type.Optional(
      Type.Record(Type.String(), Type.String({ maxLength: 500 }), {
        additionalProperties: false,
        propertyNames: scopeName,
        description: 'The scopes credentials can hold, with their descriptions, besides the built-in keys:read and keys:write.',
      }),
    ),
    issuers: Type.Optional(IssuersSchema),
    plans: Type.Optional(
      Type.Record(Type.String(), plan, {
        additionalProperties: false,
        propertyNames: { pattern: NAME_PATTERN, maxLength: MAX_NAME_LENGTH },
        description: 'What each organization may do: the scopes it can hold, its default rate limit, quota and key count (docs/routes.md "Plans"). None: every organization may hold every scope.',
      }),
    ),
    defaultPlan: Type.Optional(name('The plan of organizations without one of their own (absent: every scope, no quota).')),
    routes: Type.Array(route),
    paths: Type.Optional(
      Type.Object(
        {
          parameters: Type.Optional(Type.Union([Type.Literal('refuse'), Type.Literal('strip')], { description: '`refuse` (unless set): a path with a `;` parameter is 400. `strip`: matched without its parameters, as Tomcat, Jetty and Spring route it; forwarded as sent. Only when every upstream drops them.' })),
          emptySegments: Type.Optional(Type.Union([Type.Literal('refuse'), Type.Literal('merge')], { description: '`refuse` (unless set): a path with an empty segment (`//`) is 400. `merge`: matched with its slashes merged, as nginx\'s merge_slashes reads it; forwarded as sent. Only when every upstream merges them.' })),
        },
        { additionalProperties: false, description: 'How the upstreams read path spellings authgate refuses by default (docs/routes.md).' },
      ),
    ),
  },
  { additionalProperties: false, title: 'authgate routes file', description: 'AUTHGATE_ROUTES_FILE: the routes authgate forwards, the upstreams behind them and the scopes that guard them (docs/routes.md).' },
);

// The schema's type and the file's type (types.ts) are one: a change to either that the other
// does not follow stops the build here.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const schemaMatchesType: Same<Static<typeof RoutesFileSchema>, Mutable<RoutesFile>> = true;
void schemaMatchesType;
type Mutable<T> = T extends readonly (infer U)[] ? Mutable<U>[] : T extends object ? { -readonly [K in keyof T]: Mutable<T[K]> } : T;

/** The schema as plain JSON (TypeBox's symbols dropped): what is published and what ajv compiles. */
export function routesSchemaJson(): Record<string, unknown> {
  return { $schema: 'http://json-schema.org/draft-07/schema#', ...(JSON.parse(JSON.stringify(RoutesFileSchema)) as Record<string, unknown>) };
}
