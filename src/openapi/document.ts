import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import type { FastifySchema, RouteOptions } from 'fastify';
import { problems, type ProblemName } from '../problems.js';
import { describeProblems, Problem as ProblemSchema } from '../routes/schemas.js';
import { PROBLEM_CONTENT_TYPE } from '../request/error-handler.js';

/**
 * The two OpenAPI documents (GET /openapi.json and GET /openapi/admin.json, on the ops port) as
 * @fastify/swagger builds them from the routes' schemas, completed with what a route's schema
 * cannot say without changing what the route sends: in fastify a response schema also
 * serializes (and drops what it does not list), so the problems each stage of the pipeline can
 * answer (User-Agent, authentication, load shedding, the rate limit, the upstream) are added to
 * the document here, per route, from the route's `config.auth` and kind, never to the route
 * itself; and so are the headers some of them carry (the rate limit's).
 *
 * Both documents are linted with Redocly's recommended rules by test/openapi/document.test.ts.
 */

/** The OpenAPI tag of the forwarded routes (proxy/forwarded-docs.ts): they are told apart by it. */
export const UPSTREAM_TAG = 'upstream';

const LICENSE = { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' };
const VERSION = '0.1.0';

const PROBLEM_REF = { $ref: '#/components/schemas/Problem' };

type DocumentKind = 'public' | 'admin';
/** A route's schema as the document sees it; `response` values are JSON schemas or response objects. */
type DocumentedSchema = FastifySchema & { params?: unknown; response?: Record<string, unknown> };

/** What the document reads of a route: its methods and what its `config` asks of a credential. */
type RouteFacts = Readonly<{ methods: readonly string[]; auth: string | undefined; scoped: boolean }>;

const factsOf = (route: RouteOptions): RouteFacts => ({
  methods: typeof route.method === 'string' ? [route.method] : route.method,
  auth: route.config?.auth,
  scoped: route.config?.scope !== null,
});

/** The problems each stage can answer on a route, before and besides what the route declares itself. */
function pipelineProblems(kind: DocumentKind, { methods, auth, scoped }: RouteFacts, forwarded: boolean): ProblemName[] {
  const names: ProblemName[] = ['badRequest', 'shuttingDown']; // an undecodable path; a request while closing
  if (kind === 'admin') {
    names.push('adminTokenInvalid', 'storeUnavailable');
  } else {
    names.push('missingUserAgent', 'overloaded');
    if (auth !== undefined && auth !== 'none') names.push('credentialMissing', 'credentialInvalid', 'wrongEnvironment', 'storeUnavailable');
    if (auth === 'login-token') names.push('loginTokenRequired');
    if (auth === 'any' && scoped) names.push('insufficientScope');
  }
  if (forwarded) {
    // Dot segments are refused as unknown paths, before authentication (request/path-guard.ts);
    // the credential's rate limit comes before the upstream (limits/enforce.ts).
    names.push('notFound', 'rateLimited', 'upstreamUnavailable', 'upstreamTimeout');
  } else if (methods.includes('POST')) {
    // The gateway's own routes read their JSON bodies strictly (http/json-body.ts).
    names.push('malformedJson', 'payloadTooLarge', 'unsupportedMediaType');
  }
  // A write of the gateway's own (a credential created, changed or revoked) may wait for Redis
  // replicas (AUTHGATE_REDIS_WAIT_REPLICAS) and answer 1511 without them.
  if (!forwarded && methods.some((method) => method === 'POST' || method === 'PATCH' || method === 'DELETE')) names.push('writeNotReplicated');
  return names;
}

/**
 * The RateLimit headers (draft-ietf-httpapi-ratelimit-headers) on every answer to a credential
 * with a rate limit, on forwarded routes (limits/enforce.ts). As @fastify/swagger reads a
 * response's `headers`: each a JSON schema, its `description` becoming the header's.
 */
const RATE_LIMIT_HEADERS = {
  'RateLimit-Policy': {
    type: 'string',
    description:
      "The credential's rate limit: `\"credential\";q=<requests>;w=<window in seconds>`. Sent when the credential has one, in place of the upstream's own header of this name (which passes otherwise).",
    examples: ['"credential";q=600;w=60'],
  },
  RateLimit: {
    type: 'string',
    description:
      "What the credential's window has left, as the answering replica knows it (approximate with several replicas), and when it ends: `\"credential\";r=<remaining>;t=<seconds>`. Sent when the credential has a rate limit, in place of the upstream's own header of this name (which passes otherwise).",
    examples: ['"credential";r=42;t=17'],
  },
} as const;

/** The headers a problem's answer carries besides the problem, by problem. */
const PROBLEM_HEADERS: Partial<Record<ProblemName, Record<string, unknown>>> = {
  rateLimited: {
    ...RATE_LIMIT_HEADERS,
    'Retry-After': { type: 'integer', minimum: 1, description: "Seconds until the credential's window ends (code 1110)." },
  },
};

function problemResponse(lines: readonly string[], headers?: Record<string, unknown>): Record<string, unknown> {
  return {
    description: `A problem (RFC 9457); its \`code\`:\n${lines.join('\n')}`,
    ...(headers !== undefined && { headers }),
    content: { [PROBLEM_CONTENT_TYPE]: { schema: PROBLEM_REF } },
  };
}

/**
 * The route's documented responses: its own (an error one as a problem, described by the
 * `description` the route gave it), then the pipeline's problems, by status.
 */
function documentedResponses(own: Record<string, unknown> | undefined, pipeline: readonly ProblemName[]): Record<string, unknown> {
  const lines = new Map<string, string[]>();
  const headers = new Map<string, Record<string, unknown>>();
  const addLines = (status: string, text: string) => {
    const list = lines.get(status) ?? [];
    for (const line of text.split('\n')) if (line !== '' && !list.includes(line)) list.push(line);
    lines.set(status, list);
  };
  const responses: Record<string, unknown> = {};
  for (const [status, schema] of Object.entries(own ?? {})) {
    if (!/^[45]/.test(status)) responses[status] = schema; // 2xx, 204, `default`: as the route says
    else addLines(status, (schema as { description?: string }).description ?? '');
  }
  for (const name of pipeline) {
    const status = String(problems[name].status);
    addLines(status, describeProblems([name]));
    const extra = PROBLEM_HEADERS[name];
    if (extra !== undefined) headers.set(status, { ...headers.get(status), ...extra });
  }
  for (const [status, list] of [...lines].sort(([a], [b]) => Number(a) - Number(b))) responses[status] = problemResponse(list.sort(), headers.get(status));
  return responses;
}

/** The forwarded routes' answers: the upstream's own, as it gave them (with the gateway's RateLimit headers for a limited credential). */
const UPSTREAM_ANSWERS = {
  '2xx': { description: "The upstream's answer: its status, headers and body, as the upstream gave them.", headers: RATE_LIMIT_HEADERS, content: { '*/*': { schema: {} } } },
  default: { description: "Any other answer of the upstream (its own 4xx and 5xx included), as it gave it.", headers: RATE_LIMIT_HEADERS, content: { '*/*': { schema: {} } } },
};

/** Below a subtree: `{path}`, the rest of the path (a parameter of OpenAPI's path template). */
const REST_OF_PATH = {
  in: 'path',
  name: 'path',
  required: true,
  schema: { type: 'string' },
  description: 'The rest of the path, slashes included, forwarded as it is (with the query). A dot segment, an encoded slash or backslash is refused (404).',
};

function transformFor(kind: DocumentKind) {
  return ({ schema, url, route }: { schema: FastifySchema | undefined; url: string; route: RouteOptions }): { schema: FastifySchema; url: string } => {
    const own = (schema ?? {}) as DocumentedSchema;
    if (own.hide === true) return { schema: own, url };
    const documented: DocumentedSchema = { ...own, response: documentedResponses(own.response, pipelineProblems(kind, factsOf(route), false)) };
    if (kind === 'public') documented.security = route.config?.auth === 'none' ? [] : [{ bearer: [] }];
    return { schema: documented as FastifySchema, url };
  };
}

/** What a forwarded route asks of a credential, as http/route-policy.ts's `config.auth` says it. */
export type ForwardedAuth = 'none' | 'any' | 'login-token';

/** A header as @fastify/swagger would write a response's JSON-schema header: its schema, its description beside. */
function headerObjects(headers: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => {
      const { description, ...schema } = value as { description?: string };
      return [name, { schema, ...(description !== undefined && { description }) }];
    }),
  );
}

/**
 * One operation of a forwarded route, already in OpenAPI form: proxy/forwarded-docs.ts assembles
 * the live table's paths from these with no framework route behind them (a route table is not
 * a set of fastify routes: an exact route and a subtree may share a path, and `:` or `(` in a
 * path would be read as parameters). It reads as the gateway's own operations do: the upstream's
 * answers, the pipeline's refusals for its credential, its security, `{path}` below a subtree.
 */
export function forwardedOperation(
  described: Readonly<{ summary: string; description: string; operationId: string }>,
  auth: ForwardedAuth,
  below: boolean,
): Record<string, unknown> {
  const responses = documentedResponses(UPSTREAM_ANSWERS, pipelineProblems('public', { methods: [], auth, scoped: true }, true));
  const answers = Object.fromEntries(
    Object.entries(responses).map(([status, response]) => {
      const { headers, ...rest } = response as { headers?: Record<string, unknown> };
      return [status === '2xx' ? '2XX' : status, { ...rest, ...(headers !== undefined && { headers: headerObjects(headers) }) }];
    }),
  );
  return {
    summary: described.summary,
    tags: [UPSTREAM_TAG],
    description: described.description,
    ...(below && { parameters: [REST_OF_PATH] }),
    security: auth === 'none' ? [] : [{ bearer: [] }],
    responses: answers,
    operationId: described.operationId,
  };
}

/**
 * An operation's id from its method and path, for the operations that name none: `GET
 * /accounts/{path}` is `getAccountsPath`, stable as long as the route is. Any character of the
 * path that is not a letter or digit separates words (`/v1/items:batch` is `getV1ItemsBatch`).
 */
export function operationIdOf(method: string, path: string): string {
  const words = path.split(/[^A-Za-z0-9]+/).filter((word) => word !== '');
  return `${method.toLowerCase()}${words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join('')}`;
}

/**
 * The gateway's own operations that name no operationId get one here, from the method and the
 * path (operationIdOf), as the forwarded ones get theirs (proxy/forwarded-docs.ts).
 */
type Operations = Record<string, { operationId?: string } | undefined>;
type Document = { paths?: Record<string, Operations | undefined> };
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

function addOperationIds<D extends Document>(document: D): D {
  for (const [path, operations] of Object.entries(document.paths ?? {})) {
    if (operations === undefined) continue;
    for (const method of METHODS) {
      const operation = operations[method];
      // The methods of one route share one operation object: each gets its own copy.
      if (operation !== undefined && operation.operationId === undefined) operations[method] = { ...operation, operationId: operationIdOf(method, path) };
    }
  }
  return document;
}

const withOperationIds: FastifyDynamicSwaggerOptions['transformObject'] = (document) =>
  'openapiObject' in document ? addOperationIds(document.openapiObject as Document) : document.swaggerObject;

/** What differs between the two documents; the rest is common (documentOptions below). */
const DOCUMENTS = {
  public: {
    title: 'authgate public API',
    description: [
      "authgate's public API: logging in, API keys, and the routes forwarded to the upstream service.",
      '',
      'Every request needs a `User-Agent` header. Every refusal is `application/problem+json` with a stable',
      '`code`; every answer carries `x-request-id`. A forwarded request reaches the upstream with',
      '`x-organization-id` (the organization of the credential), `x-request-id` and `x-forwarded-*` set by the',
      'gateway and without the `Authorization` header; what the upstream answers comes back as it is, except',
      'that an answer a cache may keep is made private to the credential (`Cache-Control: private`, `public` and',
      '`s-maxage` dropped, `Vary: Authorization`) and instructions to CDNs alone (`CDN-Cache-Control`,',
      '`Surrogate-Control` ...) are dropped. The gateway\'s own API answers say `Cache-Control: no-store`.',
      'A credential with a rate limit gets `RateLimit-Policy` and `RateLimit` on every answer of a forwarded route,',
      'and 429 (code 1110) with `Retry-After` past its limit, without reaching the upstream.',
      '',
      'Browser apps on the origins listed in AUTHGATE_CORS_ORIGINS (none by default) may call the API: a CORS',
      'preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) is answered by the gateway on any path,',
      '204, without a credential and never forwarded; every answer to a listed origin, refusals included, carries',
      '`Access-Control-Allow-Origin`, `Vary: Origin` and `Access-Control-Expose-Headers` (`x-request-id`, `ratelimit`,',
      '`ratelimit-policy`, `retry-after`, `www-authenticate`). `Access-Control-Allow-Credentials` is never sent.',
      'With origins configured, every answer (to any origin or none) carries `Vary: Origin`, merged with any other Vary.',
    ].join('\n'),
    // The document is served on the ops port, so a relative URL would point there.
    server: {
      url: '{origin}',
      description: "The gateway's public port (AUTHGATE_PORT), as clients reach it.",
      variables: { origin: { default: 'http://localhost:8080', description: 'Scheme, host and port of the public port.' } },
    },
    tags: [
      { name: 'auth', description: 'Logging in and out, and the API keys of the organization.' },
      { name: UPSTREAM_TAG, description: 'Routes forwarded to the upstream service, with the organization injected.' },
    ],
    scheme: ['bearer', 'A login token (from POST /auth/login) or an API key (`agk_…`).'],
  },
  admin: {
    title: 'authgate admin API',
    description: 'Organizations, on the ops port only (never the public one), behind AUTHGATE_ADMIN_TOKEN. Every refusal is `application/problem+json` with a stable `code`.',
    server: { url: '/', description: 'The ops port (AUTHGATE_OPS_PORT) this document is served on.' },
    tags: [{ name: 'organizations', description: 'Creating, reading, changing (their rate limit) and deleting organizations.' }],
    scheme: ['adminToken', 'AUTHGATE_ADMIN_TOKEN.'],
  },
} as const;

/** @fastify/swagger's options for one of the two documents. */
function documentOptions(kind: DocumentKind): FastifyDynamicSwaggerOptions {
  const { title, description, server, tags, scheme } = DOCUMENTS[kind];
  const [schemeName, schemeDescription] = scheme;
  return {
    openapi: {
      openapi: '3.1.0',
      info: { title, version: VERSION, description, license: LICENSE },
      servers: [server],
      tags: [...tags],
      components: {
        securitySchemes: { [schemeName]: { type: 'http', scheme: 'bearer', description: schemeDescription } },
        schemas: { Problem: ProblemSchema },
      },
      security: [{ [schemeName]: [] }],
    },
    transform: transformFor(kind),
    transformObject: withOperationIds,
  };
}

/** The public port's document (GET /openapi.json on the ops port). */
export const publicDocumentOptions = () => documentOptions('public');
/** The admin API's document (GET /openapi/admin.json). */
export const adminDocumentOptions = () => documentOptions('admin');
