import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';

/**
 * A stand-in resource service for development, started by main.ts on loopback when no
 * AUTHGATE_UPSTREAM_URL is set, so the README walk-through works with nothing else installed.
 *
 * It is also the example to copy: it believes only the gateway's signed identity
 * (`x-authgate-identity`), verified against the gateway's JWKS, never a bare `x-organization-id`
 * (README "Verifying the identity in your service").
 */
/** The `upstream` of its refusals: which service answered. */
export const EXAMPLE_UPSTREAM = 'authgate bundled example upstream';

const WHAT_THIS_IS =
  "This answer is from authgate's bundled example upstream (src/example-upstream.ts), not from authgate and not from your service: " +
  'it stands in for your service in development while AUTHGATE_UPSTREAM_URL is not set. ' +
  "To send your routes to your service, set AUTHGATE_UPSTREAM_URL to its URL (or give the routes file's upstreams.default a url).";

export async function startExampleUpstream(options: { jwksUrl: string; issuer: string }): Promise<{ url: string; close(): Promise<void> }> {
  // Created once: jose fetches the keys on first use, caches them, and refetches for an unknown `kid`.
  const JWKS = createRemoteJWKSet(new URL(options.jwksUrl));
  // The assertion's `aud` is this service's own origin; known once it listens.
  let audience = '';

  /** The verified claims, or undefined for a missing, forged, foreign or expired assertion. */
  async function identity(header: string | string[] | undefined): Promise<JWTPayload | undefined> {
    if (typeof header !== 'string') return undefined;
    try {
      const { payload } = await jwtVerify(header, JWKS, {
        issuer: options.issuer,
        audience,
        algorithms: ['ES256', 'EdDSA'],
        requiredClaims: ['sub', 'exp'],
      });
      return payload;
    } catch {
      return undefined;
    }
  }

  const send = (response: ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  // Its refusals say what answered: behind a routes file of the operator's own, a bare 404 or 401
  // from here read as authgate refusing their routes (issue 46).
  const refuse = (response: ServerResponse, status: number, error: string, why: string) =>
    send(response, status, { error, upstream: EXAMPLE_UPSTREAM, detail: `${why} ${WHAT_THIS_IS}` });

  const server = createServer(async (request, response) => {
    const claims = await identity(request.headers['x-authgate-identity']);
    // Never echo the assertion back: it is a credential for as long as it lives.
    if (claims === undefined) {
      return refuse(response, 401, 'missing or invalid identity assertion', "It answers only requests that carry the gateway's signed x-authgate-identity (a public route, or AUTHGATE_IDENTITY_ASSERTION=off, sends none).");
    }
    const orgId = claims.sub;
    const path = (request.url ?? '/').split('?')[0];
    if (path === '/organization/me') {
      return send(response, 200, { id: orgId, name: claims['name'], email: claims['email'] });
    }
    if (path === '/accounts' || path?.startsWith('/accounts/')) {
      return send(response, 200, { accounts: [{ id: 'acc_example_1', organizationId: orgId, currency: 'EUR' }] });
    }
    return refuse(response, 404, 'not found', 'It serves only /accounts and /organization/me, the built-in route table\'s paths.');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  audience = url;
  return {
    url,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
