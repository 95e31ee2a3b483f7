import type { FastifyReply, FastifyRequest } from 'fastify';
import { Problem } from '../problems.js';

/**
 * The interface's bot-protection rule: every request needs a non-empty User-Agent, else 403
 * with code 1010. It runs first, before routing work, authentication or any body is read.
 */
export function userAgentGuard(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  const userAgent = request.headers['user-agent'];
  if (userAgent === undefined || userAgent.trim() === '') {
    done(new Problem('missingUserAgent', 'Send a User-Agent header with every request.', 'missing_user_agent'));
    return;
  }
  done();
}
