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
 * What is taken: a strictly simple head (simple-head.ts says which). Anything else (a body,
 * HTTP/1.0, an obs-fold, a bare CR or LF, a duplicate Authorization, a head cut by the read)
 * ends the taking for good: the untaken bytes are put back (socket.unshift) and the connection is
 * handed to node's server (`emit('connection')`, node's documented injection).
 *
 * Why the hand-off is in order (read from node's lib/_http_server.js connectionListenerInternal,
 * v20.20 and v24.21): node's parser `consume`s a socket's native handle when the handle was never
 * consumed, and then reads the kernel's bytes in C++, around the JS stream: bytes put back into
 * the stream would be parsed after later ones, or never. So before handing off the handle is
 * marked consumed (`_handle._consumed`, the flag that very check reads): node's parser then
 * takes every byte from the socket's 'data' events (its path for any non-native stream), and a
 * Readable delivers its buffer in order, the unshifted bytes first. The socket is paused before
 * the unshift and resumed after node's listeners are on, so nothing is emitted in between and the
 * put-back bytes are parsed even if no more ever arrive. Checked after the hand-off: node's parser
 * reports it did not consume (`parser._consumed === false`); if a node version ever did, the
 * connection is destroyed rather than risk misordered requests. An untrusted peer or tracing on
 * is handed over before any byte is read: node's own path, native consume and all.
 *
 * Answers: the port's own (answers.ts), their bytes as node writes them (answer-heads.ts: status
 * line, the headers in their object order, Date, `Connection: keep-alive` and `Keep-Alive:
 * timeout=N` unless the answer closes); no body for HEAD (test/edge-authz/fast-front.test.ts
 * compares the bytes with node's). Strictly in request order: while an answer waits (a decision
 * on the store, a full send buffer) the socket is paused and the rest waits.
 */
import { maxHeaderSize, type Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { createAnswerHeads, httpDate } from './answer-heads.js';
import { parseCheckedHead, simpleHeadEnd, type FrontRequest } from './simple-head.js';

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

/** The most taken: 16 KiB, and never more than node's own limit (--max-http-header-size), so a taken head is one node would take. */
const MAX_HEAD = Math.min(16 * 1024, maxHeaderSize);
/** node's internals read here (see the top): the handle's consumed flag and the parser node attaches. */
type NodeSocket = Socket & { _handle?: { _consumed?: boolean } | null; parser?: { _consumed?: boolean } | null };

export function createFastFront(options: FastFrontOptions): FastFront {
  const { http, respond, keepAliveTimeoutMs } = options;
  const sockets = new Set<Socket>();
  const taken = new Set<Connection>();
  const headOf = createAnswerHeads(keepAliveTimeoutMs);

  class Connection {
    private readonly socket: NodeSocket;
    /** An answer is awaited (a decision, or a full send buffer): the socket is paused, `rest` waits. */
    private waiting = false;
    private rest: Buffer | undefined;
    private peerEnded = false;
    /** Handed to node, ending, or gone: the front does nothing more with it. */
    private done = false;

    constructor(socket: NodeSocket) {
      this.socket = socket;
      taken.add(this);
      socket.on('data', this.onData);
      socket.on('end', this.onEnd);
      socket.on('error', this.onError);
      socket.once('close', () => taken.delete(this));
    }

    /**
     * Read or written since the last sweep: the keep-alive idle timeout's activity. A flag per
     * read and write instead of socket.setTimeout, whose timer node refreshes (a timer-list
     * insert) on every read and every write: ~2–3 % of the port's busy time in its profile
     * (issue 30's fourth step, docs/performance.md).
     */
    private active = true;
    /** The sweep that first found the connection without activity. */
    private idleSince = 0;

    private readonly onData = (chunk: Buffer): void => {
      this.active = true;
      // Paused while waiting, so nothing should come; kept in order all the same.
      if (this.waiting) this.rest = this.rest === undefined || this.rest.length === 0 ? chunk : Buffer.concat([this.rest, chunk]);
      else if (!this.done) this.run(chunk);
    };

    private readonly onEnd = (): void => {
      this.peerEnded = true;
      if (!this.waiting) this.finish();
    };

    // An error or a reset: the socket is being destroyed; nothing is left to answer.
    private readonly onError = (): void => void this.socket.destroy();

    /** A fault of the front's own (FastFrontOptions.onFault): the connection ends, the fault is reported. */
    private fail(error: unknown): void {
      this.done = true;
      this.socket.destroy();
      try {
        options.onFault?.(error);
      } catch {
        // The report failed too: the connection is gone all the same, and nothing may throw out of here.
      }
    }

    /**
     * The keep-alive idle timeout (above the proxies' own, so they close first), checked by the
     * sweep: a connection neither read from nor written to for keepAliveTimeoutMs is destroyed,
     * never sooner, at most two sweeps later (as socket.setTimeout did, whatever it was waiting on).
     */
    expireIfIdle(now: number): void {
      if (this.active) {
        this.active = false;
        this.idleSince = now;
      } else if (now - this.idleSince >= keepAliveTimeoutMs) this.socket.destroy();
    }

    /** Answers the requests in `buf` in order, until one waits or one is not taken; a fault ends the connection. */
    private run(buf: Buffer): void {
      try {
        this.answer(buf);
      } catch (error) {
        this.fail(error);
      }
    }

    private answer(buf: Buffer): void {
      const socket = this.socket;
      let pos = 0;
      while (pos < buf.length) {
        // The head's end and its bytes checked in one pass (simple-head.ts), within MAX_HEAD.
        const end = simpleHeadEnd(buf, pos, MAX_HEAD);
        const request = end === -1 ? undefined : parseCheckedHead(buf.toString('latin1', pos, end + 2), socket);
        if (request === undefined) return this.handOff(buf.subarray(pos));
        pos = end + 4;
        const answer = respond(request);
        if (answer instanceof Promise) {
          this.wait(buf.subarray(pos));
          answer.then(
            (answered) => {
              try {
                if (this.write(request.method, answered)) this.proceed();
              } catch (error) {
                this.fail(error);
              }
            },
            (error: unknown) => this.fail(error),
          );
          return;
        }
        if (!this.write(request.method, answer)) return;
        if (socket.writableNeedDrain) {
          this.wait(buf.subarray(pos));
          socket.once('drain', () => this.proceed());
          return;
        }
      }
    }

    /** Writes one answer; false when the connection goes no further here (closed, or the answer closes it). */
    private write(method: string, answer: FrontAnswer): boolean {
      const socket = this.socket;
      if (this.done || socket.destroyed) return false;
      this.active = true;
      const head = headOf(answer);
      const body = method === 'HEAD' ? '' : answer.body;
      const date = httpDate();
      if (answer.kept === true && body === '') {
        // The same bytes for every answer of this second: one Buffer, never changed once written.
        if (head.date !== date || head.bytes === undefined) {
          head.date = date;
          head.bytes = Buffer.from(head.before + date + head.after, 'latin1');
        }
        socket.write(head.bytes);
      }
      // node's encodings: a string body goes with the head as utf8, a head alone as latin1.
      else socket.write(head.before + date + head.after + body, body === '' ? 'latin1' : 'utf8');
      if (answer.headers['connection'] !== undefined) {
        this.done = true;
        socket.end();
        return false;
      }
      return true;
    }

    private wait(rest: Buffer): void {
      this.waiting = true;
      this.rest = rest;
      this.socket.pause();
    }

    /** After an awaited answer: the waiting bytes, then the socket's again. */
    private proceed(): void {
      const socket = this.socket;
      if (this.done || socket.destroyed) return;
      if (socket.writableNeedDrain) return void socket.once('drain', () => this.proceed());
      this.waiting = false;
      const rest = this.rest;
      this.rest = undefined;
      if (rest !== undefined && rest.length > 0) this.run(rest);
      if (this.done || this.waiting) return;
      if (this.peerEnded) this.finish();
      else socket.resume();
    }

    /** The peer sent its last byte and every answer is written: as node does (no half-open), end ours. */
    private finish(): void {
      if (this.done) return;
      this.done = true;
      this.socket.end();
    }

    /** node's http.Server takes the connection from `untaken` on (see the top for why in order). */
    private handOff(untaken: Buffer): void {
      const socket = this.socket;
      this.done = true;
      taken.delete(this);
      socket.removeListener('data', this.onData);
      socket.removeListener('end', this.onEnd);
      socket.removeListener('error', this.onError);
      if (socket.destroyed) return;
      // The stream has ended ('end' emitted): nothing can be put back, and node would never see the end.
      if (this.peerEnded) return void socket.end();
      socket.pause();
      if (untaken.length > 0) socket.unshift(untaken);
      if (socket._handle != null) socket._handle._consumed = true;
      http.emit('connection', socket);
      if (socket.parser?._consumed !== false) return void socket.destroy();
      socket.resume();
    }

    /** node's closeIdleConnections for a taken connection: one with no answer awaited ends now. */
    closeIfIdle(): void {
      if (this.done || this.waiting) return;
      this.done = true;
      this.socket.destroy();
    }
  }

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
    if (take) new Connection(socket);
    else http.emit('connection', socket);
  });
  // node's server never listens itself: its connection tracking (headersTimeout, requestTimeout,
  // closeIdleConnections) starts on 'listening', so the listener's is passed on.
  server.on('listening', () => http.emit('listening'));

  // The idle timeout's sweep (Connection.expireIfIdle): every tenth of the timeout, at most 1 s.
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
