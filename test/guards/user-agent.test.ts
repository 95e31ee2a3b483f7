import type { FastifyReply, FastifyRequest } from 'fastify';
import t from 'tap';
import { userAgentGuard } from '../../src/guards/user-agent.js';
import { Problem } from '../../src/problems.js';

/** guards/user-agent.ts: every request needs a non-empty User-Agent, else 403 1010. */

function judge(userAgent: string | undefined): Error | undefined {
  let outcome: Error | undefined | 'not called' = 'not called';
  const request = { headers: userAgent === undefined ? {} : { 'user-agent': userAgent } } as FastifyRequest;
  userAgentGuard(request, {} as FastifyReply, (error) => (outcome = error));
  if (outcome === 'not called') throw new Error('the guard did not call done synchronously');
  return outcome;
}

t.test('any non-blank User-Agent passes', async (t) => {
  for (const ua of ['curl/8.0', 'x', ' padded ', 'Mozilla/5.0 (X11; Linux x86_64)']) t.equal(judge(ua), undefined, ua);
});

t.test('a missing, empty or blank one is the 403 problem', async (t) => {
  for (const ua of [undefined, '', ' ', '\t \t']) {
    const error = judge(ua);
    t.type(error, Problem, JSON.stringify(ua));
    t.match(error, { problem: 'missingUserAgent', reason: 'missing_user_agent', detail: /User-Agent/ });
  }
});
