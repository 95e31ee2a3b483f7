import type { FastifyInstance } from 'fastify';
import type { SessionService } from '../services/sessions.js';
import { LoginBody, LoginResponse, NoContent, Problem as ProblemSchema } from './schemas.js';

/** POST /auth/login and POST /auth/logout. */
export async function authRoutes(app: FastifyInstance, opts: { sessions: SessionService }) {
  const { sessions } = opts;

  app.post<{ Body: LoginBody }>('/auth/login', {
    config: { auth: 'none', routeLabel: '/auth/login' },
    schema: {
      summary: 'Log in with the organization\'s e-mail and password; returns a 1-hour token.',
      body: LoginBody,
      response: { 200: LoginResponse, 400: ProblemSchema, 401: ProblemSchema, 415: ProblemSchema, 429: ProblemSchema },
    },
    handler: async (request, reply) => {
      const { token } = await sessions.login(request.body.email, request.body.password);
      return reply.header('cache-control', 'no-store').send({ token });
    },
  });

  app.post('/auth/logout', {
    config: { auth: 'login-token', routeLabel: '/auth/logout' },
    schema: { summary: 'End the login session of the token presented.', response: { 204: NoContent, 401: ProblemSchema, 403: ProblemSchema } },
    handler: async (request, reply) => {
      await sessions.logout(request.principal!.credentialId);
      return reply.code(204).send();
    },
  });
}
