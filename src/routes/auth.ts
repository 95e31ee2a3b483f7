import type { FastifyInstance } from 'fastify';
import { throttleAddress } from '../guards/client-address.js';
import type { LoginThrottle } from '../guards/login-throttle.js';
import { Problem } from '../problems.js';
import { normalizeEmail } from '../services/organizations.js';
import type { SessionService } from '../services/sessions.js';
import { LoginBody, LoginResponse, NoContent, Problem as ProblemSchema, problemOf } from './schemas.js';

/** POST /auth/login and POST /auth/logout. */
export async function authRoutes(app: FastifyInstance, opts: { sessions: SessionService; throttle: LoginThrottle }) {
  const { sessions, throttle } = opts;

  app.post<{ Body: LoginBody }>('/auth/login', {
    config: { auth: 'none', routeLabel: '/auth/login' },
    schema: {
      operationId: 'login',
      tags: ['auth'],
      summary: 'Log in with the organization\'s e-mail and password; returns a 1-hour token.',
      description: 'Needs no credential. The token answers as a bearer credential on every route; only a login token (not an API key) can create API keys or log out. Failed logins are limited per e-mail and per client address (429 with Retry-After).',
      body: LoginBody,
      response: {
        200: LoginResponse,
        400: ProblemSchema,
        401: problemOf('loginFailed'),
        415: ProblemSchema,
        429: problemOf('tooManyLoginAttempts'),
        503: problemOf('storeUnavailable', 'overloaded'),
      },
    },
    handler: async (request, reply) => {
      const email = normalizeEmail(request.body.email);
      const address = throttleAddress(request.ip);
      // Counted before the password is judged (429 here when a limit is spent): see login-throttle.ts.
      const attempt = await throttle.attempt(email, address);
      let token: string;
      try {
        ({ token } = await sessions.login(email, request.body.password));
      } catch (error) {
        if (error instanceof Problem && error.problem === 'overloaded') await attempt.notJudged();
        if (error instanceof Problem && error.problem === 'loginFailed' && attempt.exhausted) {
          request.log.warn({ event: 'login.throttled', address }, 'repeated failed logins');
        }
        throw error;
      }
      await attempt.succeeded();
      return reply.header('cache-control', 'no-store').send({ token });
    },
  });

  app.post('/auth/logout', {
    config: { auth: 'login-token', routeLabel: '/auth/logout' },
    schema: {
      operationId: 'logout',
      tags: ['auth'],
      summary: 'End the login session of the token presented.',
      description: 'Needs a login token: the token is revoked at once, on every replica.',
      response: { 204: NoContent, 401: ProblemSchema, 403: ProblemSchema },
    },
    handler: async (request, reply) => {
      await sessions.logout(request.principal!.credentialId);
      request.log.info({ event: 'logout', orgId: request.principal!.orgId }, 'logged out');
      return reply.code(204).send();
    },
  });
}
