/**
 * HAND-WRITTEN FOR SPEED (issue 30): the fast front's reading of a request head (fast-front.ts
 * takes the requests this reads, node's server every other). Its fourth step's figures
 * (docs/performance.md, "Issue 30: fourth step"): the head's bytes checked in one pass (~0.28
 * against ~0.85 µs per nginx head for the regular expression, tested against it for every byte),
 * names by cached lower-case strings and by their place in the last head (−4.2 %, −1 % CPU per
 * decision). Fifth step ("Issue 30: fifth step"): a known name compared by startsAt() and a line's
 * end found by its CR alone: decoding and parsing nginx's head 591–731 → 524–686 ns (a
 * microbenchmark, five runs each).
 *
 * What is taken: only a strictly simple head, complete within what has arrived: `METHOD SP
 * /target SP HTTP/1.1` CRLF (a method node knows, a target of visible ASCII starting with `/`),
 * `name: value` CRLF lines (a token name; a value of HTAB and visible ASCII, optional whitespace
 * trimmed as RFC 9112 says), a Host, no name twice, no Content-Length but `0`, none of Transfer-Encoding,
 * Expect, Upgrade or a Connection other than keep-alive, at most 16 KiB (and never above node's
 * own limit). No body can follow such a head, so the next request starts right after it.
 * Anything else is undefined here: node's server parses it (the 16 KiB are front-connection.ts's to check).
 */

/** A request the front took: the shape readEdgeRequest reads (http-requests.ts EdgeHttpRequest). */
export type FrontRequest = Readonly<{
  method: string;
  url: string;
  /** By lower-case name; no name twice. */
  headers: Readonly<Record<string, string>>;
  rawHeaders: readonly string[];
  socket: Readonly<{ remoteAddress: string | undefined }>;
}>;

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

/**
 * Where the simple head starting at `from` ends (the index of its CRLFCRLF), finding that end and
 * checking the bytes before it in one pass; -1 when there is none within `limit` bytes (a head cut
 * by the read, or too long) or a byte before it is one no simple head holds. The same answer as
 * `bytes.indexOf(CRLFCRLF, from)`, then that end within the limit and isSimpleHeadBytes(bytes,
 * from, end + 2) (tested against them; the reference is test/helpers/simple-head-reference.ts),
 * without the search's own call: nginx's head 345–350 → 227–235 ns (a microbenchmark; issue 30's
 * fifth step).
 */
export function simpleHeadEnd(bytes: Uint8Array, from: number, limit: number): number {
  // The CRLFCRLF must end within the limit: its first CR at most at from + limit - 4.
  const last = Math.min(bytes.length, from + limit) - 4;
  const to = Math.min(bytes.length, from + limit);
  for (let i = from; i < to; i++) {
    const c = bytes[i]!;
    if (c >= 0x20) {
      if (c >= 0x7f) return -1;
    } else if (c === 13 /* CR */ && i + 1 < to && bytes[i + 1] === 10 /* LF */) {
      if (bytes[i + 2] === 13 && bytes[i + 3] === 10) return i <= last ? i : -1;
      i++;
    } else if (c !== 9 /* HTAB */) return -1;
  }
  return -1;
}

/**
 * Whether `text` holds `part` at `at` (0 ≤ at ≤ text.length): compared character by character,
 * which costs less than V8's startsWith with a position for a head's six names and its version
 * (issue 30's fifth step; tested against startsWith).
 */
export function startsAt(text: string, part: string, at: number): boolean {
  if (at + part.length > text.length) return false;
  for (let i = 0; i < part.length; i++) if (text.charCodeAt(at + i) !== part.charCodeAt(i)) return false;
  return true;
}

/**
 * A strictly simple head (see the top), `text` being the head through its last line's CRLF and its
 * characters checked already (simpleHeadEnd); undefined for anything else (then node's server
 * parses it). The tests' reference, which checks the characters first, is
 * test/helpers/simple-head-reference.ts.
 */
export function parseCheckedHead(text: string, socket: FrontRequest['socket']): FrontRequest | undefined {
  // The checked text holds CR only as CRLF: the first CR is the first CRLF (a one-character search).
  const eol = text.indexOf('\r');
  const sp1 = text.indexOf(' ');
  if (sp1 <= 0 || sp1 > eol) return undefined;
  // nginx's sub-request is a GET: that method without slicing it out.
  const method = sp1 === 3 && text.startsWith('GET') ? 'GET' : text.slice(0, sp1);
  if (!METHODS.has(method)) return undefined;
  const sp2 = text.indexOf(' ', sp1 + 1);
  if (sp2 === -1 || eol - sp2 !== 9 || !startsAt(text, ' HTTP/1.1', sp2) || text.charCodeAt(sp1 + 1) !== 47 /* / */) return undefined;
  // Visible ASCII (the scan above left HTAB, SP and visible; no SP lies between sp1 and sp2).
  const tab = text.indexOf('\t', sp1);
  if (tab !== -1 && tab < sp2) return undefined;
  const headers: Record<string, string> = {};
  const rawHeaders: string[] = [];
  let host = false;
  let start = eol + 2;
  while (start < text.length) {
    const end = text.indexOf('\r', start);
    const index = rawHeaders.length >> 1;
    let name = RECENT_NAMES[index];
    let lower: string;
    let colon: number;
    // The name the last head had at this place (a checked token: no colon, no CR in it), followed by
    // its colon: the same name, neither scanned nor sliced nor looked up again.
    if (name !== undefined && startsAt(text, name, start) && text.charCodeAt(start + name.length) === 58 /* : */) {
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
