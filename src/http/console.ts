// The self-service console (console/, built into dist/console by `npm run build`): its few static
// files, read once at start and served from memory under /console/ with a strict CSP. Hand-written
// rather than @fastify/static: a fixed set of files known at start needs no file system access per
// request, and a name outside the set cannot reach the disk at all.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Problem } from '../problems.js';
import { varyWith } from '../request/cache-headers.js';

/** Where the build puts the console: dist/console, from dist/http/ (and from src/http/ when tests run the sources). */
export const CONSOLE_DIRECTORY = new URL('../../dist/console/', import.meta.url);

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/**
 * On every file of the console. Only its own scripts and styles run (no inline script or style,
 * no eval), it talks only to this origin, no page may frame it, and it sends no Referer.
 * img-src allows data: for the page's empty icon (`<link rel="icon" href="data:,">`), which keeps
 * the browser from asking for /favicon.ico.
 */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=()',
  // Unversioned names: the browser asks again each time, and the ETag makes that a 304.
  'cache-control': 'no-cache',
  vary: 'accept-encoding',
};

type ConsoleFile = Readonly<{ body: Buffer; gzipped: Buffer; type: string; etag: string }>;

function readConsole(directory: URL): Map<string, ConsoleFile> {
  const files = new Map<string, ConsoleFile>();
  let names: string[];
  try {
    names = readdirSync(directory);
  } catch {
    throw new Error('the console is not built (dist/console is missing): run `npm run build`, or set AUTHGATE_CONSOLE=off');
  }
  for (const name of names) {
    const type = TYPES[name.slice(name.lastIndexOf('.'))];
    if (type === undefined) continue;
    const body = readFileSync(new URL(name, directory));
    files.set(name, { body, gzipped: gzipSync(body, { level: 9 }), type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` });
  }
  if (!files.has('index.html')) throw new Error('the console is not built (no dist/console/index.html): run `npm run build`, or set AUTHGATE_CONSOLE=off');
  return files;
}

export async function consoleRoutes(app: FastifyInstance, opts: { directory?: URL }): Promise<void> {
  const files = readConsole(opts.directory ?? CONSOLE_DIRECTORY);
  const send = (request: FastifyRequest, reply: FastifyReply, file: ConsoleFile) => {
    // The CORS step's Vary (Origin) is kept: merged with the console's own, never overwritten.
    const vary = reply.getHeader('vary');
    reply.headers(CONSOLE_HEADERS).header('content-type', file.type).header('etag', file.etag);
    if (vary !== undefined) reply.header('vary', varyWith(vary, CONSOLE_HEADERS['vary']!));
    if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
    const gzip = /\bgzip\b/.test(request.headers['accept-encoding'] ?? '');
    if (gzip) reply.header('content-encoding', 'gzip');
    return reply.send(gzip ? file.gzipped : file.body);
  };
  const config = { auth: 'none' as const, routeLabel: '/console/*' };
  const schema = { hide: true };
  app.get('/console', { config, schema }, (_request, reply) => reply.redirect('/console/', 308));
  app.get('/console/', { config, schema }, (request, reply) => send(request, reply, files.get('index.html')!));
  app.get<{ Params: { file: string } }>('/console/:file', { config, schema }, (request, reply) => {
    // A page of its own is asked for without its extension (/console/reset is reset.html).
    const name = request.params.file;
    const file = files.get(name) ?? (name.includes('.') ? undefined : files.get(`${name}.html`));
    if (file === undefined) throw new Problem('notFound');
    return send(request, reply, file);
  });
}
