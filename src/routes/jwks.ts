import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { Jwks } from '../identity/signing-keys.js';

/** The path upstreams fetch the identity assertion's public keys from (RFC 8414's well-known name). */
export const JWKS_PATH = '/.well-known/jwks.json';

const JwkSet = Type.Object(
  { keys: Type.Array(Type.Object({ kid: Type.String(), kty: Type.String(), alg: Type.String(), use: Type.String() }, { additionalProperties: true })) },
  { description: 'The public keys that verify `x-authgate-identity` (RFC 7517): the signing key first, then the published next or previous ones.' },
);

/**
 * GET /.well-known/jwks.json: always on the ops port, and on the public port unless
 * AUTHGATE_IDENTITY_JWKS_ON_PUBLIC_PORT=off (the default is on: upstreams fetch it there, never
 * from the ops port with the admin API). One route, registered on both servers. Public keys only. Clients cache them (the answer says
 * 5 minutes; jose's createRemoteJWKSet keeps them 10 minutes whatever it says), which is why a
 * rotation publishes the next key well before it signs and drops the old one late (docs/operations.md).
 */
export async function jwksRoute(app: FastifyInstance, opts: { jwks: Jwks; public: boolean }) {
  const body = JSON.stringify(opts.jwks);
  app.get(JWKS_PATH, {
    ...(opts.public && { config: { auth: 'none', routeLabel: JWKS_PATH } }),
    schema: {
      // The same route on both ports; operationIds are unique across the two OpenAPI documents.
      operationId: opts.public ? 'getPublicIdentityJwks' : 'getIdentityJwks',
      tags: ['identity'],
      summary: 'The public keys of the identity assertion (JWKS).',
      description: 'What the upstream verifies `x-authgate-identity` with, e.g. jose `createRemoteJWKSet`. No credential.',
      response: { 200: JwkSet },
    },
    handler: async (_request, reply) =>
      reply.header('content-type', 'application/jwk-set+json').header('cache-control', 'public, max-age=300').send(body),
  });
}
