import t from 'tap';
import { upstreamProblem } from '../../src/proxy/upstream-errors.js';

/** proxy/upstream-errors.ts: reply-from's failures as the gateway's problems, 504 or 502. */

t.test('timeouts are upstreamTimeout (504)', async (t) => {
  for (const error of [{ statusCode: 504 }, { code: 'FST_REPLY_FROM_GATEWAY_TIMEOUT' }, { code: 'UND_ERR_CONNECT_TIMEOUT', statusCode: 500 }]) {
    t.match(upstreamProblem(error), { problem: 'upstreamTimeout', reason: 'upstream_timeout' }, JSON.stringify(error));
  }
});

t.test('everything else is upstreamUnavailable (502), echoing nothing of the error', async (t) => {
  for (const error of [{ statusCode: 503 }, { statusCode: 500, code: 'ECONNREFUSED' }, { code: 'UND_ERR_SOCKET' }, {}]) {
    const problem = upstreamProblem(error);
    t.match(problem, { problem: 'upstreamUnavailable', reason: 'upstream_unavailable' }, JSON.stringify(error));
    t.notMatch(problem.detail ?? '', /ECONN|UND_ERR/);
  }
});
