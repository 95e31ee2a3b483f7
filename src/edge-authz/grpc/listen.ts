import type { Logger } from '../../observability/logging.js';
import type { Config } from '../../config/config.js';
import { problemBody, problemHeaders } from '../../request/error-handler.js';
import { Problem } from '../../problems.js';
import type { EdgeDecider, EdgeDeny } from '../decision.js';
import type { PeerTrust } from '../peers.js';
import type { EdgeRecorder } from '../record.js';
import { startExtAuthzGrpc, type ExtAuthzGrpcServer } from './server.js';

/** A refusal made here, rendered as the public port and the decider render theirs. */
function refusalOf(problem: Problem): EdgeDeny {
  const body = problemBody(problem.problem, problem.detail);
  return { allowed: false, status: body.status, headers: problemHeaders(problem), body: JSON.stringify(body), route: undefined };
}

/**
 * The gateway's ext_authz gRPC listener (AUTHGATE_AUTHZ_GRPC_PORT on AUTHGATE_AUTHZ_HOST), built
 * on the gateway's edge decision (gateway.edge: the same decider, peer trust and recorder as the
 * HTTP authorization endpoints): undefined when the port is not set. main.ts listens with it;
 * tests start it on an in-process gateway the same way.
 */
export async function listenExtAuthzGrpc(
  edge: Readonly<{ decide: EdgeDecider; trusted: PeerTrust; record: EdgeRecorder }>,
  config: Pick<Config, 'authz' | 'authzGrpc'>,
  logger: Logger,
): Promise<ExtAuthzGrpcServer | undefined> {
  if (config.authzGrpc.port === undefined) return undefined;
  return startExtAuthzGrpc({
    decide: edge.decide,
    host: config.authz.host,
    port: config.authzGrpc.port,
    trusted: edge.trusted,
    untrusted: () => refusalOf(new Problem('authzUntrustedPeer')),
    // The decider answers its own faults (500); this is only for a fault outside it.
    failed: (error) => {
      logger.error({ event: 'authz.fault', protocol: 'ext_authz_grpc', err: error instanceof Error ? { message: error.message } : String(error) }, 'the authorization decision failed');
      return refusalOf(new Problem('internalError'));
    },
    removeCredential: config.authzGrpc.removeCredential,
    onUndecided: (request, refusal, startedAt) =>
      edge.record({
        protocol: 'ext_authz_grpc',
        method: request?.method || 'CHECK',
        route: undefined,
        status: refusal.status,
        startedAt,
        requestId: request?.requestId,
        principal: null,
        authDecision: undefined,
        // As the decider's own records: the trace Envoy passed on, for the access line.
        trace: request?.trace,
      }),
  });
}
