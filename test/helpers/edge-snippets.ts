/**
 * The shipped edge-proxy configurations (deploy/edge/) as the tests run them: the file as it is,
 * with only its example addresses replaced by loopback ports. What a test runs is what a user
 * copies, so a snippet that stops working fails a test.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const EDGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'deploy', 'edge');

/** The example addresses the snippets use, one each: the tests replace exactly these. */
export const EXAMPLE_AUTHZ = 'authgate-authz.internal:9091';
export const EXAMPLE_APP = 'app.internal:8080';
/** authgate's public port, where the gateway's own paths (/auth/, /console/, /.well-known/) go. */
export const EXAMPLE_PUBLIC = 'authgate.internal:8080';

export type EdgeAddresses = Readonly<{ listenPort: number; authzPort: number; appPort: number; publicPort: number }>;

export function readSnippet(name: string): string {
  return readFileSync(join(EDGE_DIR, name), 'utf8');
}

/** Replaces every occurrence of `from` (at least one, or the snippet changed under the test). */
export function replaceAll(text: string, from: string, to: string, file: string): string {
  if (!text.includes(from)) throw new Error(`${file}: "${from}" not found; the tests substitute it`);
  return text.split(from).join(to);
}

/** deploy/edge/nginx.conf with loopback addresses: the `http { }` block's content. */
export function renderNginxSnippet(addresses: EdgeAddresses): string {
  let text = readSnippet('nginx.conf');
  text = replaceAll(text, EXAMPLE_AUTHZ, `127.0.0.1:${addresses.authzPort}`, 'nginx.conf');
  text = replaceAll(text, EXAMPLE_APP, `127.0.0.1:${addresses.appPort}`, 'nginx.conf');
  text = replaceAll(text, EXAMPLE_PUBLIC, `127.0.0.1:${addresses.publicPort}`, 'nginx.conf');
  text = replaceAll(text, 'listen 80;', `listen 127.0.0.1:${addresses.listenPort};`, 'nginx.conf');
  return text;
}

/** deploy/edge/Caddyfile with loopback addresses (the site block only; the caller adds global options). */
export function renderCaddySnippet(addresses: EdgeAddresses): string {
  let text = readSnippet('Caddyfile');
  text = replaceAll(text, EXAMPLE_AUTHZ, `127.0.0.1:${addresses.authzPort}`, 'Caddyfile');
  text = replaceAll(text, EXAMPLE_APP, `127.0.0.1:${addresses.appPort}`, 'Caddyfile');
  text = replaceAll(text, EXAMPLE_PUBLIC, `127.0.0.1:${addresses.publicPort}`, 'Caddyfile');
  text = replaceAll(text, ':80 {', `http://127.0.0.1:${addresses.listenPort} {`, 'Caddyfile');
  return text;
}
