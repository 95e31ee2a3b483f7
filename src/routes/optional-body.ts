import type { FastifyRequest } from 'fastify';

/**
 * The preValidation of a route whose body is optional (POST /auth/api-key, its roll, POST
 * /auth/logout): no body, or an empty one, is validated as `{}`, so the schema's defaults apply
 * and the handler reads one shape.
 */
export async function absentBodyIsEmpty(request: FastifyRequest): Promise<void> {
  if (request.body === undefined) request.body = {};
}
