import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { actorOf, GATEWAY, type AuditTrail } from '../audit/trail.js';
import { throttleAddress } from '../guards/client-address.js';
import type { LeakReportThrottle } from '../guards/leak-report-throttle.js';
import type { ApiKeyService } from '../services/api-keys.js';
import { Problem as ProblemSchema, problemOf } from './schemas.js';

/**
 * Leak reports (POST /auth/api-key/leaked, for secret scanners; no credential): the bounds of
 * one report, its body limit, and how many reports one client address may send per window
 * (counted in the store, so across replicas: guards/leak-report-throttle.ts). The README and
 * docs/operations.md ("Leaked keys") state these numbers.
 */
export const LEAK_REPORTS = {
  /** Key strings in one report: at least 1, at most this. */
  maxKeys: 100,
  /** Characters per string (a key has 49): a longer one is refused as bad input, not skipped. */
  maxKeyLength: 200,
  /** This route's body limit, below the 64 KiB of the gateway's other routes. */
  bodyLimitBytes: 32 * 1024,
  /** Reports per client address (IPv6 per /64) per window. */
  perAddress: 30,
  windowSeconds: 60,
} as const;

export const LeakReportBody = Type.Object(
  {
    keys: Type.Array(Type.String({ maxLength: LEAK_REPORTS.maxKeyLength }), {
      minItems: 1,
      maxItems: LEAK_REPORTS.maxKeys,
      description: 'The strings found, as found: API keys of this gateway\'s environment are revoked; anything else is ignored.',
    }),
  },
  { additionalProperties: false },
);
export type LeakReportBody = Static<typeof LeakReportBody>;

export const LeakReportAccepted = Type.Object(
  { received: Type.Integer({ description: 'How many strings the report held; never how many were keys.' }) },
  { description: 'The report is taken: every real key in it is already revoked. The same answer whatever the strings were.' },
);

/** POST /auth/api-key/leaked: a secret scanner reports keys it found in public; they are revoked at once. */
export async function leakedKeyRoutes(app: FastifyInstance, opts: { apiKeys: ApiKeyService; throttle: LeakReportThrottle; audit: AuditTrail }) {
  const { apiKeys, throttle, audit } = opts;

  app.post<{ Body: LeakReportBody }>('/auth/api-key/leaked', {
    config: { auth: 'none', routeLabel: '/auth/api-key/leaked' },
    bodyLimit: LEAK_REPORTS.bodyLimitBytes,
    // The address's limit is known from the head: a refused report's body is never read (nor
    // invited with 100 Continue: request/admission.ts). So a malformed report counts as well.
    onRequest: async (request) => throttle.admit(throttleAddress(request.ip)),
    schema: {
      operationId: 'reportLeakedApiKeys',
      tags: ['auth'],
      summary: 'Report leaked API keys: each real key of this environment is revoked at once.',
      description: [
        'Needs no credential: for secret scanners (or a relay that extracts the key strings from their format).',
        `Send 1 to ${LEAK_REPORTS.maxKeys} strings of at most ${LEAK_REPORTS.maxKeyLength} characters (body at most ${LEAK_REPORTS.bodyLimitBytes / 1024} KiB).`,
        'Every one that is an existing key of this gateway\'s environment (`agk_live_…` on production, `agk_test_…` on sandbox) is revoked at once, on every replica;',
        'anything else is ignored. The answer is the same whatever the strings were: it never says which were keys.',
        `At most ${LEAK_REPORTS.perAddress} reports per client address per ${LEAK_REPORTS.windowSeconds} seconds (429 with Retry-After).`,
      ].join(' '),
      body: LeakReportBody,
      response: {
        202: LeakReportAccepted,
        400: ProblemSchema,
        415: ProblemSchema,
        429: problemOf('tooManyLeakReports'),
        503: problemOf('storeUnavailable'),
      },
    },
    handler: async (request, reply) => {
      // Audit lines name the organization and the key's id: never the key, nor its hash.
      await apiKeys.reportLeaked(request.body.keys, ({ orgId, keyId }) => {
        request.log.info({ event: 'api_key.leaked', orgId, keyId }, 'API key reported leaked: revoked');
        audit.record({ type: 'api_key.leaked', orgId, ...actorOf(request), actorDetail: GATEWAY, details: { keyId } });
      });
      return reply.code(202).header('cache-control', 'no-store').send({ received: request.body.keys.length });
    },
  });
}
