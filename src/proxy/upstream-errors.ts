import { Problem } from '../problems.js';

/** reply-from's failures, by the status it gives them, as the gateway's problems. */
export function upstreamProblem(error: { statusCode?: number; code?: string }): Problem {
  const timedOut = error.statusCode === 504 || error.code === 'FST_REPLY_FROM_GATEWAY_TIMEOUT' || error.code === 'UND_ERR_CONNECT_TIMEOUT' || error.code === 'UND_ERR_HEADERS_TIMEOUT';
  return timedOut
    ? new Problem('upstreamTimeout', 'The upstream service did not answer in time.', 'upstream_timeout')
    : new Problem('upstreamUnavailable', 'The upstream service could not be reached.', 'upstream_unavailable');
}
