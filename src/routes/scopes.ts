import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { RouteTableSource } from '../route-table/types.js';
import type { PlanLookup } from '../plans/organization-plans.js';
import { planAllowsName } from '../route-table/plans.js';
import { Problem as ProblemSchema } from './schemas.js';

export const ScopeListing = Type.Object(
  {
    scopes: Type.Array(
      Type.Object({
        name: Type.String({ description: 'The scope, `resource:action`.' }),
        description: Type.String({ description: "What it allows, in the operator's words (the routes file's `scopes`)." }),
      }),
      { description: "The routes file's scopes in its order, then the built-in keys:read and keys:write; with plans, only those the caller's organization's plan includes." },
    ),
    plan: Type.Optional(Type.String({ description: "The caller's organization's plan (the routes file's `plans`); absent when none applies." })),
  },
  { description: 'The scopes a key may be given.' },
);

/**
 * GET /auth/scopes: the scopes the live route table declares, with their descriptions, in the
 * table's order: what a key may be given (POST and PATCH /auth/api-key refuse any other name, 400
 * code 1212; with plans, only the caller's plan's: 403 code 1130 for another), and what the console's picker offers. Any credential, no scope needed (`scope:
 * null`): the names are what the gateway's own answers already show a credential, and knowing
 * them is how a client asks for the right one. Read per request, so a reload shows at once.
 */
export async function scopeRoutes(app: FastifyInstance, opts: { routes: RouteTableSource; plans: PlanLookup }) {
  app.get('/auth/scopes', {
    config: { auth: 'any', scope: null, routeLabel: '/auth/scopes' },
    schema: {
      operationId: 'listScopes',
      tags: ['auth'],
      summary: 'The scopes the route table declares, with their descriptions.',
      description: 'With a login token or any API key (no scope needed). In the table\'s order: the routes file\'s scopes, then the built-in `keys:read` and `keys:write`.',
      response: { 200: ScopeListing, 401: ProblemSchema },
    },
    handler: async (request, reply) => {
      const routeTable = opts.routes.current();
      const table = routeTable.scopes;
      // With plans, the caller's plan's (issue 47): what a key of theirs may be given and can use.
      const plan = opts.plans.planOf(request.principal!.orgId, routeTable);
      const names = plan === undefined ? table.names : table.names.filter((name) => planAllowsName(plan, name));
      const scopes = names.map((name) => ({ name, description: table.descriptions.get(name) ?? '' }));
      return reply.header('cache-control', 'no-store').send({ scopes, ...(plan !== undefined && { plan: plan.name }) });
    },
  });
}
