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
 * names remembered by place (−4.2 %, −1 %).
 *
 * What is taken: only a strictly simple head, complete within what has arrived: `METHOD SP
 * /target SP HTTP/1.1` CRLF (a method node knows, a target of visible ASCII starting with `/`),
 * `name: value` CRLF lines (a token name; a value of HTAB and visible ASCII, optional whitespace
 * trimmed as RFC 9112 says), a Host, no name twice, no Content-Length but `0`, none of Transfer-Encoding,
 * Expect, Upgrade or a Connection other than keep-alive, at most 16 KiB (and never above node's
 * own limit). No body can follow such a head, so the next request starts right after it.
 * Anything else (a body, HTTP/1.0, an obs-fold, a bare CR or LF, a duplicate Authorization, a head
 * cut by the read) ends the taking for good: the untaken bytes are put back (socket.unshift) and
 * the connection is handed to node's server (`emit('connection')`, node's documented injection).
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
 * Answers: the port's own (http-server.ts) in the order node writes them: status line, the
 * headers in their object order, Date, `Connection: keep-alive` and `Keep-Alive: timeout=N`
 * unless the answer closes; no body for HEAD (test/edge-authz/fast-front.test.ts compares the
 * bytes with node's). Strictly in request order: while an answer waits (a decision on the store,
 * a full send buffer) the socket is paused and the rest waits.
 */
import { STATUS_CODES, maxHeaderSize, type Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';

/** A request the front took: the shape readEdgeRequest reads (http-requests.ts EdgeHttpRequest). */
export type FrontRequest = Readonly<{
  method: string;
  url: string;
  /** By lower-case name; no name twice. */
  headers: Readonly<Record<string, string>>;
  rawHeaders: readonly string[];
  socket: Readonly<{ remoteAddress: string | undefined }>;
}>;

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
  keepAliveTimeoutMs: number;
}>;

const HEAD_END = Buffer.from('\r\n\r\n', 'latin1');
/** The most taken: 16 KiB, and never more than node's own limit (--max-http-header-size), so a taken head is one node would take. */
const MAX_HEAD = Math.min(16 * 1024, maxHeaderSize);
const MAX_HEADERS = 64;
/** Methods llhttp knows and an edge proxy sends: another method (node may refuse it) goes to node. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH']);
/** tchar (RFC 9110 §5.6.2). */
const TOKEN = new Uint8Array(128);
for (const c of "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") TOKEN[c.charCodeAt(0)] = 1;

/**
 * Header names as sent → their lower-case name, internalized (a property key's own string), for at
 * most LOWER_NAMES names: a proxy sends the same few names on every request. Keying `headers`
 * with a fresh toLowerCase() string cost the engine a string-table lookup per access: in the
 * front's profile those accesses and toLowerCase were ~2/3 of parseSimpleHead's time (issue 30's
 * fourth step, docs/performance.md).
 */
const LOWER = new Map<string, string>();
const LOWER_NAMES = 256;
function lowerOf(name: string): string {
  let lower = LOWER.get(name);
  if (lower === undefined) {
    lower = Object.keys({ [name.toLowerCase()]: 0 })[0]!;
    if (LOWER.size < LOWER_NAMES) LOWER.set(name, lower);
  }
  return lower;
}

/**
 * The last head's names by place (its first header's, its second's…) and their lower-case
 * names: a proxy sends its headers in the same order request after request, so a name is
 * mostly known by one comparison where it starts (parseCheckedHead). Only names that passed
 * the token check are kept here.
 */
const RECENT_NAMES: string[] = [];
const RECENT_LOWER: string[] = [];

/** A byte no simple head holds: a CTL but HTAB (CR and LF only as CRLF), DEL, or beyond ASCII. */
const UNTAKEN_BYTE = /[^\t\r\n\x20-\x7e]|\r(?!\n)|(?<!\r)\n/;

/** node's internals read here (see the top): the handle's consumed flag and the parser node attaches. */
type NodeSocket = Socket & { _handle?: { _consumed?: boolean } | null; parser?: { _consumed?: boolean } | null };

/**
 * Whether bytes `from` to `to` hold only what a simple head may: HTAB and visible ASCII and SP,
 * CR only as CRLF and LF only after CR; the same answer as `!UNTAKEN_BYTE.test(latin1 text)`.
 * One pass over the bytes as they arrived: the regular expression's lookarounds cost ~3× as
 * much per head (~0.85 against ~0.28 µs for nginx's ~260-byte head; issue 30's fourth step).
 */
export function isSimpleHeadBytes(bytes: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = bytes[i]!;
    if (c >= 0x20) {
      if (c >= 0x7f) return false;
    } else if (c === 13 /* CR */ && i + 1 < to && bytes[i + 1] === 10 /* LF */) i++;
    else if (c !== 9 /* HTAB */) return false;
  }
  return true;
}

/**
 * A strictly simple head (see the top), `text` being the head through its last line's CRLF;
 * undefined for anything else (then node's server parses it).
 */
export function parseSimpleHead(text: string, socket: FrontRequest['socket']): FrontRequest | undefined {
  // One native scan for what no line may hold: a CTL but HTAB, DEL, a byte ≥ 0x80, a bare CR or LF.
  if (UNTAKEN_BYTE.test(text)) return undefined;
  return parseCheckedHead(text, socket);
}

/** parseSimpleHead for a text whose characters were checked already (isSimpleHeadBytes). */
function parseCheckedHead(text: string, socket: FrontRequest['socket']): FrontRequest | undefined {
  const eol = text.indexOf('\r\n');
  const sp1 = text.indexOf(' ');
  if (sp1 <= 0 || sp1 > eol) return undefined;
  // nginx's sub-request is a GET: that method without slicing it out.
  const method = sp1 === 3 && text.startsWith('GET') ? 'GET' : text.slice(0, sp1);
  if (!METHODS.has(method)) return undefined;
  const sp2 = text.indexOf(' ', sp1 + 1);
  if (sp2 === -1 || eol - sp2 !== 9 || !text.startsWith(' HTTP/1.1', sp2) || text.charCodeAt(sp1 + 1) !== 47 /* / */) return undefined;
  // Visible ASCII (the scan above left HTAB, SP and visible; no SP lies between sp1 and sp2).
  const tab = text.indexOf('\t', sp1);
  if (tab !== -1 && tab < sp2) return undefined;
  const headers: Record<string, string> = {};
  const rawHeaders: string[] = [];
  let host = false;
  let start = eol + 2;
  while (start < text.length) {
    const end = text.indexOf('\r\n', start);
    const index = rawHeaders.length >> 1;
    let name = RECENT_NAMES[index];
    let lower: string;
    let colon: number;
    // The name the last head had at this place (a checked token: no colon, no CR in it), followed by
    // its colon: the same name, neither scanned nor sliced nor looked up again.
    if (name !== undefined && text.startsWith(name, start) && text.charCodeAt(start + name.length) === 58 /* : */) {
      colon = start + name.length;
      lower = RECENT_LOWER[index]!;
    } else {
      for (colon = start; colon < end; colon++) {
        const c = text.charCodeAt(colon);
        if (c === 58 /* : */) break;
        if (c > 127 || TOKEN[c] === 0) return undefined;
      }
      // No name (an obs-fold's leading whitespace is no token either), or no colon.
      if (colon === start || colon === end) return undefined;
      name = text.slice(start, colon);
      lower = lowerOf(name);
      if (index < MAX_HEADERS) {
        RECENT_NAMES[index] = name;
        RECENT_LOWER[index] = lower;
      }
    }
    let from = colon + 1;
    let to = end;
    while (from < to && (text.charCodeAt(from) === 32 || text.charCodeAt(from) === 9)) from++;
    while (to > from && (text.charCodeAt(to - 1) === 32 || text.charCodeAt(to - 1) === 9)) to--;
    const value = text.slice(from, to);
    // Repeated (an inherited name such as `constructor` counts as one: handed over, never misread).
    if (headers[lower] !== undefined) return undefined;
    switch (lower) {
      case 'host':
        host = true;
        break;
      case 'content-length':
        // Exactly `0`: no body follows (Envoy's ext_authz check carries it on every request). Any
        // other length announces a body, node's to read (or, from nginx, never to come).
        if (value !== '0') return undefined;
        break;
      case 'transfer-encoding':
      case 'expect':
      case 'upgrade':
        return undefined;
      case 'connection':
        if (value.toLowerCase() !== 'keep-alive') return undefined;
        break;
    }
    headers[lower] = value;
    if (rawHeaders.push(name, value) > 2 * MAX_HEADERS) return undefined;
    start = end + 2;
  }
  if (!host) return undefined;
  return { method, url: text.slice(sp1 + 1, sp2), headers, rawHeaders, socket };
}

export function createFastFront(options: FastFrontOptions): FastFront {
  const { http, respond, keepAliveTimeoutMs } = options;
  const keepAliveLines = `Connection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(keepAliveTimeoutMs / 1000)}\r\n`;
  const sockets = new Set<Socket>();
  const taken = new Set<Connection>();
  /**
   * A kept answer's bytes: its header block around the Date value, and the whole answer as one
   * Buffer for the current Date (made again when the second changes). Written as a Buffer, the
   * answer is neither concatenated nor flattened nor copied into a new string per request (issue
   * 30's fourth step, measured in docs/performance.md).
   */
  type Head = { readonly before: string; readonly after: string; date: string; bytes: Buffer | undefined };
  const heads = new WeakMap<FrontAnswer, Head>();

  function headOf(answer: FrontAnswer): Head {
    let head = heads.get(answer);
    if (head !== undefined) return head;
    let before = `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? 'unknown'}\r\n`;
    for (const name in answer.headers) before += `${name}: ${answer.headers[name]}\r\n`;
    head = { before: `${before}Date: `, after: `\r\n${answer.headers['connection'] === undefined ? keepAliveLines : ''}\r\n`, date: '', bytes: undefined };
    if (answer.kept === true) heads.set(answer, head);
    return head;
  }

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

    /** Answers the requests in `buf` in order, until one waits or one is not taken. */
    private run(buf: Buffer): void {
      const socket = this.socket;
      let pos = 0;
      while (pos < buf.length) {
        const end = buf.indexOf(HEAD_END, pos);
        const request = end === -1 || end + 4 - pos > MAX_HEAD || !isSimpleHeadBytes(buf, pos, end + 2) ? undefined : parseCheckedHead(buf.toString('latin1', pos, end + 2), socket);
        if (request === undefined) return this.handOff(buf.subarray(pos));
        pos = end + 4;
        const answer = respond(request);
        if (answer instanceof Promise) {
          this.wait(buf.subarray(pos));
          answer.then(
            (answered) => {
              if (this.write(request.method, answered)) this.proceed();
            },
            () => socket.destroy(),
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
    if (options.takes(socket)) new Connection(socket);
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

let dateSecond = -1;
let dateText = '';
/** The Date header's value (RFC 9110 IMF-fixdate, as node writes it), made once per second. */
function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}
