// The ops port's server: metrics, health, the admin API and the OpenAPI documents (buildOpsServer).
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import swagger from '@fastify/swagger';
import { adminOutcomeOf } from '../admin/admin-token.js';
import { adminRoutes } from '../admin/routes.js';
import type { UsageReports } from '../services/usage-report.js';
import type { AdminRefusalThrottle } from '../guards/admin-refusal-throttle.js';
import type { AccessLog } from '../observability/access-log.js';
import type { AuditTrail } from '../audit/trail.js';
import type { AuditStore } from '../store/audit.js';
import type { Jwks } from '../identity/signing-keys.js';
import { jwksRoute } from '../routes/jwks.js';
import { routesSchemaJson } from '../route-table/schema.js';
import type { Health } from '../observability/health.js';
import type { Logger } from '../observability/logging.js';
import type { Metrics } from '../observability/metrics.js';
import type { ApiKeyService } from '../services/api-keys.js';
import type { OrganizationService } from '../services/organizations.js';
import type { ProfileService } from '../services/organization-profiles.js';
import type { SessionService } from '../services/sessions.js';
import type { RouteTableSource } from '../route-table/types.js';
import type { PasswordChangeService } from '../services/password-changes.js';
import { ADMISSION_SERVER_OPTIONS, admitRequests, hostProblem } from '../request/admission.js';
import { createErrorHandler } from '../request/error-handler.js';
import { adminDocumentOptions } from '../openapi/document.js';
import { useStrictJsonBodies } from './json-body.js';
import { clientErrorHandler, expectationFailedHandler, frameworkErrorHandler, notFoundOrMethodNotAllowed, refuseUnrouted, shuttingDown, watchClosing } from '../request/refusals.js';
import { HEADERS_TIMEOUT_MS, sharedServerOptions } from './server-options.js';

export type OpsServerDeps = Readonly<{
  adminToken: string;
  /** Refused admin requests per client address, shared by replicas through the store. */
  adminRefusals: AdminRefusalThrottle;
  /** The same access line as the public port's, one per request (never a header, so never the token). */
  accessLog: AccessLog;
  logger: Logger;
  metrics: Metrics;
  health: Health;
  organizations: OrganizationService;
  /** Changing an organization's name and e-mail (PATCH /admin/organizations/{id}). */
  profiles: ProfileService;
  /** The API keys' service: the admin API lists and revokes an organization's keys with it. */
  apiKeys: ApiKeyService;
  /** The login sessions' service: the admin API lists and ends an organization's sessions with it. */
  sessions: SessionService;
  /** Password resets: the admin API issues reset tokens, never passwords. */
  passwords: PasswordChangeService;
  /** Second factors: the admin API sees and removes them (issue 32). */
  mfa: import('../services/mfa.js').MfaService;
  /** Moving organizations between plans (issue 47). */
  plans: import('../services/organization-plans.js').PlanService;
  /** Members (issue 50): the admin API lists them, changes a role, removes one. */
  members?: import('../services/members.js').MemberService;
  /** The audit trail: admin actions are recorded in it, GET /admin/audit reads it. */
  audit: AuditTrail;
  auditLog: Pick<AuditStore, 'readAuditEvents'>;
  /** GET /admin/organizations/:id/usage (services/usage-report.ts). */
  usage: UsageReports;
  /** The public API's OpenAPI document, served here so the public port carries only the API. */
  publicOpenApi: () => unknown;
  /** The identity assertion's public keys; undefined when the assertion is off. */
  jwks: Jwks | undefined;
  /** The live route table: /readyz shows its hash, so a rollout can check every replica serves the same one. */
  routes: RouteTableSource;
  /** Whether GET /openapi.json describes the live table (proxy/forwarded-docs.ts): /readyz says it too. */
  routesDocumented: () => boolean;
}>;

/**
 * On every answer of the ops port: its request id, and no-store. Admin answers carry what only
 * the operator may see (organizations, their keys and sessions, and any secret or token a route
 * returns, now or later), so no cache keeps any of them unless a route says otherwise itself (the
 * JWKS: public keys, 5 minutes).
 */
const stampRequestId = (request: FastifyRequest, reply: FastifyReply) => void reply.header('x-request-id', request.id).header('cache-control', 'no-store');

/** The ops port: metrics, health, the admin API and the OpenAPI documents. Never public. */
export async function buildOpsServer(deps: OpsServerDeps): Promise<FastifyInstance> {
  const app = Fastify({
    ...sharedServerOptions(deps.logger),
    // The same refusals as the public port's, as problems (request/refusals.ts).
    frameworkErrors: frameworkErrorHandler(stampRequestId),
    clientErrorHandler: clientErrorHandler({}),
    // A missing Host is refused by the first hook, as a problem (request/admission.ts), not by node.
    http: ADMISSION_SERVER_OPTIONS,
  });
  // `Expect: 100-continue` answered when the body is first read; a refusal past the drain bound
  // closes the connection (request/admission.ts).
  const [framework] = app.server.listeners('request') as Parameters<typeof admitRequests>[1][];
  if (framework === undefined) throw new Error('fastify attached no request handler');
  admitRequests(app.server, framework);
  app.server.headersTimeout = HEADERS_TIMEOUT_MS;
  app.server.on('checkExpectation', expectationFailedHandler({}));
  app.setErrorHandler(createErrorHandler('authgate-admin'));
  app.setNotFoundHandler(notFoundOrMethodNotAllowed);
  const shutdown = watchClosing(app);
  app.addHook('onRequest', (request, reply, done) => {
    stampRequestId(request, reply);
    const badHost = hostProblem(request.raw);
    if (badHost !== undefined) done(badHost);
    else if (shutdown.closing) done(shuttingDown(reply));
    else done();
  });
  // An unknown route or method: refused from the head, before its body would be parsed.
  app.addHook('onRequest', refuseUnrouted);
  app.addHook('onResponse', (request, reply, done) => {
    const admin = adminOutcomeOf(request);
    deps.accessLog({
      reqId: request.id,
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      status: reply.statusCode,
      durationMs: Math.round(reply.elapsedTime * 1000) / 1000,
      orgId: undefined,
      credentialKind: admin?.accepted === true ? 'admin' : undefined,
      keyId: undefined,
      authReason: admin?.accepted === false ? admin.reason : undefined,
    });
    done();
  });
  useStrictJsonBodies(app);
  await app.register(swagger, adminDocumentOptions());

  const hidden = { schema: { hide: true } };
  app.get('/livez', hidden, async () => ({ status: 'alive' }));
  app.get('/readyz', hidden, async (_request, reply) => {
    const { health } = deps;
    const invalidation = health.invalidationSubscribed ? 'subscribed' : 'unsubscribed (serving from Redis without cache)';
    // A refused reload leaves the table in use (and the replica ready): the hash says which one it is.
    const table = deps.routes.current();
    // A table that could not be documented is served all the same (the replica stays ready); the detail says it.
    const openapi = deps.routesDocumented() ? 'documented' : 'failed (see the routes.openapi_failed log line)';
    const routes = { hash: table.hash, source: table.source ?? 'built-in', openapi };
    if (health.ready) return { status: 'ready', invalidation, routes };
    return reply.code(503).header('retry-after', '1').send({ status: health.storeUp ? 'draining' : 'store_unavailable', invalidation, routes });
  });
  app.get('/metrics', hidden, async (_request, reply) => {
    const body = await deps.metrics.registry.metrics();
    return reply.header('content-type', deps.metrics.registry.contentType).send(body);
  });
  app.get('/openapi.json', hidden, async () => deps.publicOpenApi());
  app.get('/openapi/admin.json', hidden, async () => app.swagger());
  // The routes file's JSON Schema (docs/routes.md), for editors and CI: config/routes.schema.json.
  const routesSchema = JSON.stringify(routesSchemaJson());
  app.get('/routes.schema.json', hidden, async (_request, reply) => reply.type('application/schema+json').send(routesSchema));
  if (deps.jwks !== undefined) await app.register(jwksRoute, { jwks: deps.jwks, public: false });

  await app.register(adminRoutes, { organizations: deps.organizations, profiles: deps.profiles, apiKeys: deps.apiKeys, sessions: deps.sessions, passwords: deps.passwords, mfa: deps.mfa, plans: deps.plans, members: deps.members, trail: deps.audit, auditLog: deps.auditLog, adminToken: deps.adminToken, refusals: deps.adminRefusals, countRefusal: (reason) => deps.metrics.adminRefusals.inc({ reason }), audit: deps.logger, usage: deps.usage });
  return app;
}
