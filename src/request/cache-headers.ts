// What caches between the client and the gateway (a CDN, a company proxy, the browser's own) may
// keep of an answer: Vary merged rather than overwritten, an upstream's answer to a credentialed
// request made private to that credential, and no-store for answers that carry secrets.
import type { FastifyReply, FastifyRequest } from 'fastify';

type HeaderValue = string | string[] | number | undefined;

/**
 * Response headers an upstream may address to CDNs alone, each overriding Cache-Control there
 * (RFC 9213 CDN-Cache-Control, Cloudflare's and Fastly's/Akamai's own, nginx's X-Accel-Expires):
 * a CDN that honours one would keep an answer the gateway made private. Never on an answer to a
 * credentialed request, so dropped from every forwarded answer (proxy/forward.ts).
 */
export const TARGETED_CACHE_HEADERS = ['cdn-cache-control', 'cloudflare-cdn-cache-control', 'surrogate-control', 'edge-control', 'x-accel-expires'] as const;

/** Whether a comma-separated list (a Vary value) names `token`, case-insensitively (`lower` is lower-case). */
function listNames(list: string, lower: string): boolean {
  let start = 0;
  while (start <= list.length) {
    let end = list.indexOf(',', start);
    if (end === -1) end = list.length;
    let from = start;
    let to = end;
    while (from < to && (list.charCodeAt(from) === 32 || list.charCodeAt(from) === 9)) from++;
    while (to > from && (list.charCodeAt(to - 1) === 32 || list.charCodeAt(to - 1) === 9)) to--;
    if (to - from === lower.length && list.slice(from, to).toLowerCase() === lower) return true;
    start = end + 1;
  }
  return false;
}

/**
 * `vary` with `name` added unless already named: merged, never overwritten (RFC 9110 §12.5.5).
 * `*` stays `*` (it already says the answer varies on everything).
 */
export function varyWith(vary: HeaderValue, name: string): string {
  if (vary === undefined || vary === '') return name;
  const text = Array.isArray(vary) ? vary.join(', ') : String(vary);
  if (listNames(text, '*')) return '*';
  return listNames(text, name.toLowerCase()) ? text : `${text}, ${name}`;
}

/**
 * An upstream's Cache-Control on an answer to a credentialed request, as the client gets it:
 * `null` when it says `no-store` (nothing keeps it: left as it is); otherwise with an unqualified
 * `private` (RFC 9111 §5.2.2.7: no shared cache may store it), `public` and `s-maxage` (which
 * only speak to shared caches, and would let one reuse it across credentials: §3.5) dropped, and
 * a qualified `private="…"` (which lets a shared cache keep the rest) replaced. Unchanged when it
 * already says an unqualified `private`. Quoted values are skipped whole, so a `private` inside
 * `no-cache="…"` is not taken for the directive.
 *
 * The last value and its result are kept: an upstream sends the same few values again and again,
 * so the hot path parses and allocates nothing for them.
 */
export function privateCacheControl(value: string | string[] | number): string | null {
  const text = Array.isArray(value) ? value.join(', ') : String(value);
  if (text === lastCacheControl) return lastPrivate;
  const result = parsePrivate(text);
  lastCacheControl = text;
  lastPrivate = result;
  return result;
}
let lastCacheControl: string | undefined;
let lastPrivate: string | null = null;

function parsePrivate(text: string): string | null {
  let kept = '';
  let alreadyPrivate = false;
  let i = 0;
  const n = text.length;
  while (i < n) {
    // The next directive starts after commas and white space.
    while (i < n && (text[i] === ',' || text[i] === ' ' || text[i] === '\t')) i++;
    if (i >= n) break;
    const start = i;
    while (i < n && text[i] !== ',' && text[i] !== '=') i++;
    const name = text.slice(start, i).trim().toLowerCase();
    const qualified = text[i] === '=';
    if (qualified) {
      i++;
      while (i < n && (text[i] === ' ' || text[i] === '\t')) i++;
      if (text[i] === '"') {
        i++;
        while (i < n && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
        i++;
      }
      while (i < n && text[i] !== ',') i++;
    }
    if (name === 'no-store') return null;
    if (name === 'private' && !qualified) alreadyPrivate = true;
    if (name === 'public' || name === 's-maxage' || name === 'private') continue;
    kept += `, ${text.slice(start, i).trim()}`;
  }
  return alreadyPrivate ? text : `private${kept}`;
}

/**
 * The onRequest hook of routes whose answers carry a secret or a token (a login token, a key's
 * secret, anything an admin route returns): no cache of any kind keeps them (RFC 9111 §5.2.2.5).
 * Added per plugin, so every route registered there, now or later, has it.
 */
export function noStore(_request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  reply.header('cache-control', 'no-store');
  done();
}
