import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { RouteTableSource } from '../route-table/types.js';
import { Problem as ProblemSchema } from './schemas.js';

export const ScopeListing = Type.Object(
  {
    scopes: Type.Array(
      Type.Object({
        name: Type.String({ description: 'The scope, `resource:action`.' }),
        description: Type.String({ description: "What it allows, in the operator's words (the routes file's `scopes`)." }),
      }),
      { description: "The routes file's scopes in its order, then the built-in keys:read and keys:write." },
    ),
  },
  { description: 'The scopes a key may be given.' },
);

/**
 * GET /auth/scopes: the scopes the live route table declares, with their descriptions, in the
 * table's order: what a key may be given (POST and PATCH /auth/api-key refuse any other name, 400
 * code 1212), and what the console's picker offers. Any credential, no scope needed (`scope:
 * null`): the names are what the gateway's own answers already show a credential, and knowing
 * them is how a client asks for the right one. Read per request, so a reload shows at once.
 */
export async function scopeRoutes(app: FastifyInstance, opts: { routes: RouteTableSource }) {
  app.get('/auth/scopes', {
    config: { auth: 'any', scope: null, routeLabel: '/auth/scopes' },
    schema: {
      operationId: 'listScopes',
      tags: ['auth'],
      summary: 'The scopes the route table declares, with their descriptions.',
      description: 'With a login token or any API key (no scope needed). In the table\'s order: the routes file\'s scopes, then the built-in `keys:read` and `keys:write`.',
      response: { 200: ScopeListing, 401: ProblemSchema },
    },
    handler: async (_request, reply) => {
      const table = opts.routes.current().scopes;
      const scopes = table.names.map((name) => ({ name, description: table.descriptions.get(name) ?? '' }));
      return reply.header('cache-control', 'no-store').send({ scopes });
    },
  });
}
