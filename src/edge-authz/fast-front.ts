/**
 * HAND-WRITTEN FOR SPEED (issue 30): the authorization port's listener, answering the common
 * request without node's IncomingMessage/ServerResponse, and handing every other one to node's
 * http.Server, which parses it as it always did.
 *
 * Why: the bench target is ≥ 0.95× nginx → a minimal node:http key service. Measured (Node 24,
 * loopback, server on one core): node:http answering a constant 200 costs 22–25 µs CPU per
 * request (21–23 with optimizeEmptyRequests), a `net` server splitting heads on CRLFCRLF and
 * writing a constant answer 15–16 µs; authgate's own decision adds ~10 µs on top of node:http,
 * so only leaving node's request/response machinery makes the budget. Bench figures of this
 * module: docs/performance.md ("Issue 30: the fast front"). Its fourth step, measured there
 * ("Issue 30: fourth step"): a kept answer written as one Buffer per second (−4.7 % CPU per
 * decision), the idle timeout by a sweep (−1.5 %), the head's bytes checked in one pass with
 * names remembered by place (−4.2 %, −1 %). Fifth step ("Issue 30: fifth step"): the head's end
 * found in that same pass (simpleHeadEnd), no Buffer#indexOf call per head.
 *
 * SPEED TRICK `fast-front` (speed-tricks.ts lists them all). Off
 * (AUTHGATE_AUTHZ_SPEED_TRICKS_OFF=fast-front): http-server.ts hands every connection to node's
 * server before a byte is read, as with tracing on; the answers are the same bytes either way.
 *
 * What is taken: a strictly simple head (simple-head.ts says which). Anything else (a body,
 * HTTP/1.0, an obs-fold, a bare CR or LF, a duplicate Authorization, a head cut by the read)
 * ends the taking for good: the untaken bytes are put back (socket.unshift) and the connection is
 * handed to node's server (`emit('connection')`, node's documented injection).
 *
 * How a taken connection is read, answered and handed off, and why the hand-off keeps the
 * order of its bytes: front-connection.ts.
 *
 * Answers: the port's own (answers.ts), their bytes as node writes them (answer-heads.ts: status
 * line, the headers in their object order, Date, `Connection: keep-alive` and `Keep-Alive:
 * timeout=N` unless the answer closes); no body for HEAD (test/edge-authz/fast-front.test.ts
 * compares the bytes with node's). Strictly in request order: while an answer waits (a decision
 * on the store, a full send buffer) the socket is paused and the rest waits.
 */
import type { Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { createAnswerHeads } from './answer-heads.js';
import { FrontConnection, type FrontShared } from './front-connection.js';
import type { FrontRequest } from './simple-head.js';

/** What to answer, as node's writeHead(status, headers) + end(body) would write it. */
export type FrontAnswer = Readonly<{
  status: number;
  /** In writing order; `connection: close` among them ends the connection after this answer. */
  headers: Readonly<Record<string, string | number>>;
  body: string;
  /** The same object answers again (a kept allow): its header block is made once. */
  kept?: boolean;
}>;

export type FastFront = Readonly<{
  /** The port's listener: every connection is accepted here. */
  server: Server;
  /** Stops listening, ends idle connections (node's too), resolves once every connection has ended. */
  close(): Promise<void>;
  closeAllConnections(): void;
}>;

export type FastFrontOptions = Readonly<{
  /** node's server, for every connection or rest of a connection the front does not take. */
  http: HttpServer;
  /** Whether the front may take this connection's requests; false hands it to node's server before anything is read. */
  takes: (socket: Socket) => boolean;
  /** The port's answer to a taken request; never rejects (a fault is an answer too). */
  respond: (request: FrontRequest) => FrontAnswer | Promise<FrontAnswer>;
  /**
   * A fault of the front's own (respond threw or rejected all the same, an answer could not be
   * written): the connection is destroyed, since what was written of it is not known, and the
   * fault reported here. Never a thrown error or an unhandled rejection out of the front.
   */
  onFault?: ((error: unknown) => void) | undefined;
  keepAliveTimeoutMs: number;
}>;

export function createFastFront(options: FastFrontOptions): FastFront {
  const { http, keepAliveTimeoutMs } = options;
  const sockets = new Set<Socket>();
  const taken = new Set<FrontConnection>();
  const front: FrontShared = { http, respond: options.respond, onFault: options.onFault, keepAliveTimeoutMs, headOf: createAnswerHeads(keepAliveTimeoutMs), taken };

  const server = createServer({ allowHalfOpen: true, noDelay: true }, (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    // A check that throws (a defect) hands the connection to node, whose own handler meets the
    // same fault and answers it: never an exception out of the listener, which would end the process.
    let take = false;
    try {
      take = options.takes(socket);
    } catch {
      // Not taken: node's handler answers it.
    }
    if (take) new FrontConnection(socket, front);
    else http.emit('connection', socket);
  });
  // node's server never listens itself: its connection tracking (headersTimeout, requestTimeout,
  // closeIdleConnections) starts on 'listening', so the listener's is passed on.
  server.on('listening', () => http.emit('listening'));

  // The idle timeout's sweep (FrontConnection.expireIfIdle): every tenth of the timeout, at most 1 s.
  const sweepMs = Math.max(1, Math.min(1000, Math.floor(keepAliveTimeoutMs / 10)));
  let sweeper: NodeJS.Timeout | undefined;
  server.on('listening', () => {
    sweeper ??= setInterval(() => {
      const now = performance.now();
      for (const connection of taken) connection.expireIfIdle(now);
    }, sweepMs).unref();
  });
  server.on('close', () => {
    clearInterval(sweeper);
    sweeper = undefined;
  });

  return {
    server,
    close: () =>
      new Promise<void>((resolve) => {
        if (!server.listening) return resolve();
        server.close(() => resolve());
        // node's: stops its connection checks and ends its idle connections (the handed-off ones).
        http.close();
        for (const connection of taken) connection.closeIfIdle();
      }),
    closeAllConnections: () => {
      for (const socket of sockets) socket.destroy();
    },
  };
}
