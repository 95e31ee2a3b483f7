import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { Problem } from '../problems.js';
import type { OrganizationService } from '../services/organizations.js';
import { OrganizationResponse, Problem as ProblemSchema, problemOf } from '../routes/schemas.js';

const OrganizationListQuery = Type.Object(
  {
    // Strings: query values are not coerced (http/server-options.ts).
    limit: Type.Optional(Type.String({ pattern: '^([1-9][0-9]?|[1-4][0-9]{2}|500)$', description: 'How many organizations per page, 1 to 500: 100 unless given.' })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 1400, description: 'The `nextCursor` of the previous page (of the same search).' })),
    email: Type.Optional(Type.String({ minLength: 1, maxLength: 254, description: 'Only the organization with this e-mail (compared trimmed and lower-cased).' })),
    namePrefix: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only organizations whose name starts with this, case-insensitive; ordered by name.' })),
  },
  { additionalProperties: false },
);
type OrganizationListQuery = Static<typeof OrganizationListQuery>;

const OrganizationList = Type.Object(
  {
    organizations: Type.Array(OrganizationResponse),
    nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'Fetches the next page; null on the last.' }),
  },
  { description: 'A page of organizations: by e-mail, or by name under namePrefix.' },
);

/** GET /admin/organizations, beside the other admin routes (admin/routes.ts), behind the same admin token. */
export function organizationListRoute(app: FastifyInstance, organizations: OrganizationService): void {
  app.get<{ Querystring: OrganizationListQuery }>('/admin/organizations', {
    schema: {
      operationId: 'listOrganizations',
      tags: ['organizations'],
      summary: 'List organizations, a page at a time; search by e-mail or name prefix.',
      description: 'Ordered by e-mail, or by name with namePrefix; never a password hash. `email` and `namePrefix` do not combine.',
      querystring: OrganizationListQuery,
      response: { 200: OrganizationList, 400: ProblemSchema, 401: ProblemSchema, 429: problemOf('tooManyAdminRefusals') },
    },
    handler: async (request) => {
      const { limit, cursor, email, namePrefix } = request.query;
      if (email !== undefined && namePrefix !== undefined) throw new Problem('badRequest', 'Search by email or by namePrefix, not both.');
      return organizations.list({
        limit: limit === undefined ? 100 : Number(limit),
        ...(cursor !== undefined && { cursor }),
        ...(email !== undefined && { email }),
        ...(namePrefix !== undefined && { namePrefix }),
      });
    },
  });
}
