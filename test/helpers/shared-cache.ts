import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';

/**
 * A caching HTTP proxy on loopback, in front of a gateway, that stores and reuses answers to GET
 * as RFC 9111 says (and no more): a tiny CDN for tests. `shared` is a CDN or corporate proxy; not
 * shared is a browser's own cache (a private cache, which RFC 9111 lets store `private` answers
 * and answers to requests with Authorization).
 *
 * - Stored by URL (§2), only a 200 with explicit freshness (`s-maxage` in a shared cache, then
 *   `max-age`, then `Expires`; no heuristic freshness), never with `no-store` (§3), never with an
 *   unqualified `private` in a shared cache (§5.2.2.7).
 * - A shared cache stores an answer to a request with Authorization only when the answer says
 *   `public`, `s-maxage` or `must-revalidate` (§3.5).
 * - Reused only while fresh, and only when every request header its Vary names matches the one
 *   the stored answer was made for (§4.1); `Vary: *` never matches. No revalidation: a stale or
 *   unmatched entry is fetched again and replaces the stored one (one variant per URL and Vary
 *   values, as §4.1 lets a cache keep).
 *
 * Each answer says `x-test-cache: HIT` or `MISS`, so a test sees what the cache did.
 */
export type SharedCache = { url: string; hits: number; close(): Promise<void> };

type Stored = Readonly<{ status: number; headers: IncomingHttpHeaders; body: Buffer; request: IncomingHttpHeaders; varies: string[]; expires: number }>;

function directives(value: string | string[] | undefined): Map<string, string | true> {
  const out = new Map<string, string | true>();
  const text = Array.isArray(value) ? value.join(',') : (value ?? '');
  // Quoted values may hold commas: split outside quotes only.
  for (const part of text.match(/(?:[^,"]|"(?:[^"\\]|\\.)*")+/g) ?? []) {
    const at = part.indexOf('=');
    const name = (at === -1 ? part : part.slice(0, at)).trim().toLowerCase();
    if (name !== '' && !out.has(name)) out.set(name, at === -1 ? true : part.slice(at + 1).trim().replace(/^"|"$/g, ''));
  }
  return out;
}

function freshForMs(headers: IncomingHttpHeaders, cc: Map<string, string | true>, shared: boolean): number | undefined {
  for (const name of shared ? ['s-maxage', 'max-age'] : ['max-age']) {
    const value = cc.get(name);
    if (typeof value === 'string' && /^\d+$/.test(value)) return Number(value) * 1000;
  }
  const expires = headers['expires'];
  if (expires !== undefined) {
    const at = Date.parse(expires);
    return Number.isNaN(at) ? 0 : at - Date.now();
  }
  return undefined;
}

function storable(request: IncomingHttpHeaders, status: number, headers: IncomingHttpHeaders, shared: boolean): number | undefined {
  if (status !== 200) return undefined;
  const cc = directives(headers['cache-control']);
  if (cc.has('no-store')) return undefined;
  if (shared && cc.get('private') === true) return undefined;
  if (shared && request['authorization'] !== undefined && !cc.has('public') && !cc.has('s-maxage') && !cc.has('must-revalidate')) return undefined;
  const fresh = freshForMs(headers, cc, shared);
  return fresh !== undefined && fresh > 0 ? fresh : undefined;
}

function varyNames(vary: string | string[] | undefined): string[] {
  const text = Array.isArray(vary) ? vary.join(',') : (vary ?? '');
  return text.split(',').map((name) => name.trim().toLowerCase()).filter((name) => name !== '');
}

function matches(entry: Stored, request: IncomingHttpHeaders): boolean {
  if (Date.now() >= entry.expires) return false;
  for (const name of entry.varies) {
    if (name === '*') return false;
    if (String(entry.request[name] ?? '') !== String(request[name] ?? '')) return false;
  }
  return true;
}

export async function startSharedCache(target: string, options: { shared?: boolean } = {}): Promise<SharedCache> {
  const shared = options.shared ?? true;
  const origin = new URL(target);
  const entries = new Map<string, Stored[]>();
  const cache: SharedCache = { url: '', hits: 0, close: async () => {} };
  const server: Server = createServer((request, response) => {
    const url = request.url ?? '/';
    if (request.method === 'GET') {
      const hit = entries.get(url)?.find((entry) => matches(entry, request.headers));
      if (hit !== undefined) {
        cache.hits++;
        response.writeHead(hit.status, { ...hit.headers, 'x-test-cache': 'HIT' });
        return void response.end(hit.body);
      }
    }
    const headers = { ...request.headers, host: origin.host };
    const upstream = httpRequest({ host: origin.hostname, port: origin.port, path: url, method: request.method, headers }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('end', () => {
        const body = Buffer.concat(chunks);
        const status = answer.statusCode ?? 502;
        const answerHeaders = { ...answer.headers };
        delete answerHeaders['connection'];
        delete answerHeaders['keep-alive'];
        delete answerHeaders['transfer-encoding'];
        answerHeaders['content-length'] = String(body.length);
        const fresh = request.method === 'GET' ? storable(request.headers, status, answerHeaders, shared) : undefined;
        if (fresh !== undefined) {
          const entry: Stored = { status, headers: answerHeaders, body, request: request.headers, varies: varyNames(answerHeaders['vary']), expires: Date.now() + fresh };
          // One entry per URL and selecting headers: a new one replaces the one it matches.
          const kept = (entries.get(url) ?? []).filter((old) => !entry.varies.every((name) => String(old.request[name] ?? '') === String(request.headers[name] ?? '')));
          entries.set(url, [...kept, entry]);
        }
        response.writeHead(status, { ...answerHeaders, 'x-test-cache': 'MISS' });
        response.end(body);
      });
    });
    upstream.on('error', () => {
      if (!response.headersSent) response.writeHead(502);
      response.end();
    });
    request.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cache.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  cache.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return cache;
}
