/**
 * The key service behind the nginx reference row (issue 18): what a platform team writes by hand
 * for nginx `auth_request`. Plain node:http, keep-alive, the same check as authgate's hot path in
 * spirit: a User-Agent, `Authorization: Bearer <key>`, SHA-256 of the key, one Map lookup of the
 * digest; 200 with `x-organization-id`, else 401 (403 without a User-Agent). nginx turns any other
 * status of an auth subrequest into a 500, so those two are the only refusals.
 *
 * The keys arrive as digests, never as secrets: BENCH_KEY_DIGESTS is a JSON array of
 * [base64url SHA-256 of the key, organization id] pairs.
 */
import * as crypto from 'node:crypto';
import { createServer } from 'node:http';
import { serveAsChild } from './lib/child-server.js';

const pairs = JSON.parse(process.env['BENCH_KEY_DIGESTS'] ?? '[]') as [string, string][];
if (pairs.length === 0) throw new Error('keyservice: BENCH_KEY_DIGESTS names no key');
const organizations = new Map<string, string>(pairs);

const sha256: (value: string) => string =
  typeof crypto.hash === 'function' ? (value) => crypto.hash('sha256', value, 'base64url') : (value) => crypto.createHash('sha256').update(value).digest('base64url');

const server = createServer((request, response) => {
  const userAgent = request.headers['user-agent'];
  if (userAgent === undefined || userAgent === '') {
    response.writeHead(403, { 'content-length': 0 });
    response.end();
    return;
  }
  const authorization = request.headers['authorization'];
  const organization = authorization !== undefined && authorization.startsWith('Bearer ') ? organizations.get(sha256(authorization.slice(7))) : undefined;
  if (organization === undefined) {
    response.writeHead(401, { 'content-length': 0 });
    response.end();
    return;
  }
  response.writeHead(200, { 'x-organization-id': organization, 'content-length': 0 });
  response.end();
});
serveAsChild(server);
