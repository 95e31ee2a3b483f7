import httpProxy from '@fastify/http-proxy';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ForwardedRoute } from '../config/forwarded-routes.js';
import { removeHopByHopHeaders, rewriteIdentityHeaders, type OutgoingHeaders } from './identity-headers.js';
import { pathGuard } from './path-guard.js';
import { upstreamProblem } from './upstream-errors.js';
import type { Metrics } from '../observability/metrics.js';

export type ForwardOptions = Readonly<{
  routes: readonly ForwardedRoute[];
  metrics: Metrics;
  upstreamUrl: string;
  timeoutMs: number;
  trustForwarded: boolean;
}>;

/**
 * One @fastify/http-proxy registration per row of the route table: path and query go to the
 * upstream untouched, bodies stream, identity headers are rewritten from request.principal.
 */
export async function forwardedRoutes(app: FastifyInstance, opts: ForwardOptions): Promise<void> {
  const rewriteRequestHeaders = (request: FastifyRequest, headers: OutgoingHeaders) => {
    // route-policy guarantees a principal on every forwarded route; this is the last fence.
    if (request.principal === null) throw new Error('forwarded request without a principal');
    request.upstreamStartedAt = performance.now(); // the request leaves for the upstream now
    return rewriteIdentityHeaders(headers, request.principal, request.id, opts.trustForwarded);
  };
  const onError = (reply: FastifyReply, { error }: { error: Error & { statusCode?: number; code?: string } }) => {
    const problem = upstreamProblem(error);
    opts.metrics.upstreamErrors.inc({ route: reply.request.routeOptions.config.routeLabel ?? 'unmatched', kind: problem.reason ?? 'unknown' });
    reply.send(problem);
  };
  // Measured to the end of the answer to the client, which streams the upstream's body.
  app.addHook('onResponse', (request, _reply, done) => {
    if (request.upstreamStartedAt > 0) {
      opts.metrics.upstreamDuration.observe({ route: request.routeOptions.config.routeLabel ?? 'unmatched' }, (performance.now() - request.upstreamStartedAt) / 1000);
    }
    done();
  });

  // Before authentication (route-level hooks run after this instance-level one).
  app.addHook('onRequest', pathGuard);

  for (const route of opts.routes) {
    await app.register(httpProxy, {
      upstream: opts.upstreamUrl,
      prefix: route.path,
      rewritePrefix: route.path,
      // '' is the prefix itself, exactly; '/*' is everything below it.
      routes: route.subtree ? ['', '/*'] : [''],
      httpMethods: [...route.methods],
      config: { auth: route.auth, routeLabel: route.subtree ? `${route.path}/*` : route.path },
      disableRequestLogging: true,
      undici: {
        connections: 128,
        pipelining: 1,
        keepAliveTimeout: 60_000,
        headersTimeout: opts.timeoutMs,
        bodyTimeout: opts.timeoutMs,
        connectTimeout: Math.min(opts.timeoutMs, 5_000),
      },
      replyOptions: {
        rewriteRequestHeaders,
        rewriteHeaders: removeHopByHopHeaders,
        onError,
        // An upstream's 503 is the upstream's answer to give, not a reason to retry it.
        retryDelay: () => null,
      },
    } as Parameters<typeof httpProxy>[1]);
  }
}
