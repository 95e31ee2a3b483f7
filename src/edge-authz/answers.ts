/**
 * The authorization port's answers over HTTP (issue 30), made once for both of its paths: node's
 * server writes them with writeHead/end, the fast front (fast-front.ts) writes their bytes
 * itself. What each answer carries, and why, is http-server.ts's top comment.
 */
import { validateHeaderValue } from 'node:http';
import { problemBody, problemHeaders } from '../request/error-handler.js';
import { problems, type Problem } from '../problems.js';
import type { EdgeAllow, EdgeDecision, EdgeProtocol } from './decision.js';
import type { FrontAnswer } from './fast-front.js';

/** A refusal's answer; `close`: the connection ends after it. */
export function refusalAnswer(problem: Problem, close: boolean): FrontAnswer {
  const body = JSON.stringify(problemBody(problem.problem, problem.detail));
  const headers: Record<string, string | number> = { ...problemHeaders(problem), 'content-length': Buffer.byteLength(body) };
  if (close) headers['connection'] = 'close';
  return { status: problems[problem.problem].status, headers, body };
}

/**
 * Every value checked with node's own rule (validateHeaderValue: no line break, no control
 * character), which node's path applies when it writes: the fast front writes heads itself, so
 * the check is made here, on every answer made (a kept allow's once), for both paths. A
 * decision's values are the gateway's own (ids, scopes, a JWT); one that fails is a defect or a
 * corrupt record, a fault (it throws), never an injected header line.
 */
function checked(headers: Record<string, string | number>): Record<string, string | number> {
  for (const name in headers) validateHeaderValue(name, String(headers[name]));
  return headers;
}

/** A decision's answer; `close`: the connection ends after it. Throws on a header value node would refuse (checked above). */
export type DecisionAnswers = (protocol: EdgeProtocol, decision: EdgeDecision, close: boolean) => FrontAnswer;

/**
 * SPEED TRICK `header-blocks` (speed-tricks.ts lists them all; with answer-heads.ts): decisions'
 * answers, each kept allow's made once per protocol, the same answer object again for the same
 * allow (decider-outcomes.ts keeps it: `kept-allows`), marked `kept` so that its header block is rendered
 * once and its bytes written as one Buffer per second (answer-heads.ts, fast-front.ts).
 *
 * Why: copying, checking and rendering an allow's headers per request was a large part of a warm
 * decision. What it bought, with `kept-allows`: CPU per decision ×0.79 (API key), ×0.75 (JWT);
 * the one Buffer 0.953 more (docs/performance.md, issue 30's answer and fourth step). An answer
 * that closes the connection is never kept.
 *
 * Off (`keep` false: AUTHGATE_AUTHZ_SPEED_TRICKS_OFF=header-blocks): every answer made anew and
 * not marked kept, so its head is rendered as a string for each request, as a refusal's is.
 */
export function createDecisionAnswers(keep: boolean): DecisionAnswers {
  const allowAnswers = new WeakMap<EdgeAllow, Partial<Record<EdgeProtocol, FrontAnswer>>>();
  return (protocol, decision, close) => {
    let headers: Record<string, string | number>;
    if (decision.allowed) {
      let answers: Partial<Record<EdgeProtocol, FrontAnswer>> | undefined;
      if (!close && keep) {
        answers = allowAnswers.get(decision);
        const kept = answers?.[protocol];
        if (kept !== undefined) return kept;
      }
      headers = { ...decision.upstreamHeaders };
      const seconds = decision.cacheSeconds;
      if (seconds > 0) {
        headers['cache-control'] = `max-age=${seconds}`;
        headers['x-accel-expires'] = seconds;
      } else headers['cache-control'] = 'no-store';
      if (protocol === 'ext_authz_http' && decision.removeHeaders.length > 0) headers['x-envoy-auth-headers-to-remove'] = decision.removeHeaders.join(', ');
      headers['content-length'] = 0;
      checked(headers);
      if (close || !keep) {
        if (close) headers['connection'] = 'close';
        return { status: 200, headers, body: '' };
      }
      const answer: FrontAnswer = { status: 200, headers, body: '', kept: true };
      if (answers === undefined) allowAnswers.set(decision, (answers = {}));
      answers[protocol] = answer;
      return answer;
    }
    headers = checked({ ...decision.headers, 'content-length': Buffer.byteLength(decision.body) });
    if (close) headers['connection'] = 'close';
    return { status: decision.status, headers, body: decision.body };
  };
}
