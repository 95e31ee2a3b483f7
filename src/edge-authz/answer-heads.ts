/**
 * The bytes of the fast front's answers (fast-front.ts), as node's writeHead would write them:
 * the status line, the headers in their object order, Date, then `Connection: keep-alive` and
 * `Keep-Alive: timeout=N` unless the answer closes the connection.
 *
 * Part of SPEED TRICK `header-blocks` (answers.ts says why and what it bought; speed-tricks.ts
 * lists them all): a kept answer's head is rendered once. Off
 * (AUTHGATE_AUTHZ_SPEED_TRICKS_OFF=header-blocks), no answer comes marked kept and every head is
 * rendered per request.
 */
import { STATUS_CODES } from 'node:http';
import type { FrontAnswer } from './fast-front.js';

/**
 * An answer's header block around the Date value, and for a kept answer the whole answer as one
 * Buffer for the current Date (`bytes`, made again by the writer when `date` changes). Written as
 * a Buffer, a kept answer is neither concatenated nor flattened nor copied into a new string per
 * request (issue 30's fourth step, measured in docs/performance.md).
 */
export type AnswerHead = { readonly before: string; readonly after: string; date: string; bytes: Buffer | undefined };

/** An answer's head, made once for a kept answer (FrontAnswer.kept), else each time. */
export function createAnswerHeads(keepAliveTimeoutMs: number): (answer: FrontAnswer) => AnswerHead {
  const keepAliveLines = `Connection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(keepAliveTimeoutMs / 1000)}\r\n`;
  const heads = new WeakMap<FrontAnswer, AnswerHead>();
  return (answer) => {
    let head = heads.get(answer);
    if (head !== undefined) return head;
    let before = `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? 'unknown'}\r\n`;
    for (const name in answer.headers) before += `${name}: ${answer.headers[name]}\r\n`;
    head = { before: `${before}Date: `, after: `\r\n${answer.headers['connection'] === undefined ? keepAliveLines : ''}\r\n`, date: '', bytes: undefined };
    if (answer.kept === true) heads.set(answer, head);
    return head;
  };
}

let dateSecond = -1;
let dateText = '';
/** The Date header's value (RFC 9110 IMF-fixdate, as node writes it), made once per second. */
export function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}
