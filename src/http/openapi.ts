import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import type { FastifySchema, RouteOptions } from 'fastify';
import { problems, type ProblemName } from '../problems.js';
import { describeProblems, Problem as ProblemSchema } from '../routes/schemas.js';
import { PROBLEM_CONTENT_TYPE } from './error-handler.js';

/**
 * The two OpenAPI documents (GET /openapi.json and GET /openapi/admin.json, on the ops port) as
 * @fastify/swagger builds them from the routes' schemas, completed with what a route's schema
 * cannot say without changing what the route sends: in fastify a response schema also
 * serializes (and drops what it does not list), so the problems each stage of the pipeline can
 * answer (User-Agent, authentication, load shedding, the rate limit, the upstream) are added to
 * the document here, per route, from the route's `config.auth` and kind, never to the route
 * itself; and so are the headers some of them carry (the rate limit's).
 *
 * Both documents are linted with Redocly's recommended rules by test/http/openapi.test.ts.
 */

/** The OpenAPI tag of the forwarded routes (proxy/forwarded-docs.ts): they are told apart by it. */
export const UPSTREAM_TAG = 'upstream';

const LICENSE = { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' };
const VERSION = '0.1.0';

const PROBLEM_REF = { $ref: '#/components/schemas/Problem' };

type DocumentKind = 'public' | 'admin';
/** A route's schema as the document sees it; `response` values are JSON schemas or response objects. */
type DocumentedSchema = FastifySchema & { params?: unknown; response?: Record<string, unknown> };

/** The problems each stage can answer on a route, before and besides what the route declares itself. */
function pipelineProblems(kind: DocumentKind, route: RouteOptions, forwarded: boolean): ProblemName[] {
  const methods = typeof route.method === 'string' ? [route.method] : route.method;
  const names: ProblemName[] = ['badRequest', 'shuttingDown']; // an undecodable path; a request while closing
  if (kind === 'admin') {
    names.push('adminTokenInvalid', 'storeUnavailable');
  } else {
    names.push('missingUserAgent', 'overloaded');
    const auth = route.config?.auth;
    if (auth !== undefined && auth !== 'none') names.push('credentialMissing', 'credentialInvalid', 'wrongEnvironment', 'storeUnavailable');
    if (auth === 'login-token') names.push('loginTokenRequired');
    if (auth === 'any' && route.config?.scope !== null) names.push('insufficientScope');
  }
  if (forwarded) {
    // Dot segments are refused as unknown paths, before authentication (proxy/path-guard.ts);
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

/** `/accounts/*` as a valid path template: fastify's wildcard becomes the `path` parameter. */
const REST_OF_PATH = {
  type: 'object',
  properties: {
    path: {
      type: 'string',
      description: 'The rest of the path, slashes included, forwarded as it is (with the query). A dot segment, an encoded slash or backslash is refused (404).',
    },
  },
  required: ['path'],
};

function transformFor(kind: DocumentKind) {
  return ({ schema, url, route }: { schema: FastifySchema | undefined; url: string; route: RouteOptions }): { schema: FastifySchema; url: string } => {
    const own = (schema ?? {}) as DocumentedSchema;
    if (own.hide === true) return { schema: own, url };
    const forwarded = own.tags?.includes(UPSTREAM_TAG) === true;
    const documented: DocumentedSchema = {
      ...own,
      response: documentedResponses(forwarded ? UPSTREAM_ANSWERS : own.response, pipelineProblems(kind, route, forwarded)),
    };
    if (kind === 'public') documented.security = route.config?.auth === 'none' ? [] : [{ bearer: [] }];
    if (url.endsWith('/*')) return { schema: { ...documented, params: REST_OF_PATH } as FastifySchema, url: `${url.slice(0, -1)}{path}` };
    return { schema: documented as FastifySchema, url };
  };
}

/**
 * Operations declared with several methods (the forwarded routes) share one schema, so their
 * operationId is made here from the method and the path: `GET /accounts/{path}` is
 * `getAccountsPath`, stable as long as the route is.
 */
type Operations = Record<string, { operationId?: string } | undefined>;
type Document = { paths?: Record<string, Operations | undefined> };
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

function addOperationIds<D extends Document>(document: D): D {
  for (const [path, operations] of Object.entries(document.paths ?? {})) {
    if (operations === undefined) continue;
    const words = path.split('/').filter((word) => word !== '').map((word) => word.replace(/[{}]/g, ''));
    const name = words.map((word) => word.replace(/(^|[-_])([a-z])/g, (_match, _sep: string, letter: string) => letter.toUpperCase())).join('');
    for (const method of METHODS) {
      const operation = operations[method];
      // The methods of one route share one operation object: each gets its own copy.
      if (operation !== undefined && operation.operationId === undefined) operations[method] = { ...operation, operationId: `${method}${name}` };
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
