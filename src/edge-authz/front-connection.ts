/**
 * HAND-WRITTEN FOR SPEED (issue 30): one connection the authorization port's fast front
 * (fast-front.ts) has taken: its requests read and answered strictly in order, its keep-alive
 * idle timeout, and its hand-off to node's http.Server at the first request the front does not
 * take. Apart from the listener, which accepts connections and sweeps and closes them all; what is
 * taken, why, and what it measured is fast-front.ts's top comment.
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
 * is handed over before any byte is read (fast-front.ts): node's own path, native consume and all.
 */
import { maxHeaderSize, type Server as HttpServer } from 'node:http';
import type { Socket } from 'node:net';
import { httpDate, type AnswerHead } from './answer-heads.js';
import type { FastFrontOptions, FrontAnswer } from './fast-front.js';
import { parseCheckedHead, simpleHeadEnd } from './simple-head.js';

/** The most taken: 16 KiB, and never more than node's own limit (--max-http-header-size), so a taken head is one node would take. */
const MAX_HEAD = Math.min(16 * 1024, maxHeaderSize);
/** node's internals read here (see the top): the handle's consumed flag and the parser node attaches. */
type NodeSocket = Socket & { _handle?: { _consumed?: boolean } | null; parser?: { _consumed?: boolean } | null };

/** What every connection of one fast front shares: made once per front (createFastFront). */
export type FrontShared = Readonly<{
  /** node's server, for the rest of a connection the front does not take. */
  http: HttpServer;
  respond: FastFrontOptions['respond'];
  onFault: FastFrontOptions['onFault'];
  keepAliveTimeoutMs: number;
  /** An answer's head (answer-heads.ts), kept for a kept answer. */
  headOf: (answer: FrontAnswer) => AnswerHead;
  /** The connections taken and not handed off: the idle sweep's and close()'s. */
  taken: Set<FrontConnection>;
}>;

export class FrontConnection {
  private readonly socket: NodeSocket;
  /** What every connection of its front shares (the front's options, its answers' heads, the taken set). */
  private readonly front: FrontShared;
  /** An answer is awaited (a decision, or a full send buffer): the socket is paused, `rest` waits. */
  private waiting = false;
  private rest: Buffer | undefined;
  private peerEnded = false;
  /** Handed to node, ending, or gone: the front does nothing more with it. */
  private done = false;

  constructor(socket: NodeSocket, front: FrontShared) {
    this.socket = socket;
    this.front = front;
    front.taken.add(this);
    socket.on('data', this.onData);
    socket.on('end', this.onEnd);
    socket.on('error', this.onError);
    socket.once('close', () => front.taken.delete(this));
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

  /** A fault of the front's own (FastFrontOptions.onFault, fast-front.ts): the connection ends, the fault is reported. */
  private fail(error: unknown): void {
    this.done = true;
    this.socket.destroy();
    try {
      this.front.onFault?.(error);
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
    } else if (now - this.idleSince >= this.front.keepAliveTimeoutMs) this.socket.destroy();
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
      const answer = this.front.respond(request);
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
    const head = this.front.headOf(answer);
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

  /** node's http.Server takes the connection from `untaken` on (the top of this module says why in order). */
  private handOff(untaken: Buffer): void {
    const socket = this.socket;
    this.done = true;
    this.front.taken.delete(this);
    socket.removeListener('data', this.onData);
    socket.removeListener('end', this.onEnd);
    socket.removeListener('error', this.onError);
    if (socket.destroyed) return;
    // The stream has ended ('end' emitted): nothing can be put back, and node would never see the end.
    if (this.peerEnded) return void socket.end();
    socket.pause();
    if (untaken.length > 0) socket.unshift(untaken);
    if (socket._handle != null) socket._handle._consumed = true;
    this.front.http.emit('connection', socket);
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
