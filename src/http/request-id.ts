// The request id: the client's x-request-id when sane, else a fresh UUID; on every answer and forwarded upstream.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A client's x-request-id when it is sane (so traces join up), a fresh UUID otherwise. */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
}
