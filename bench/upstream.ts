/**
 * The upstream every scenario ends at: node:http, keep-alive, one small JSON body. It answers
 * 200 to everything, so it costs the same per request whoever calls it.
 */
import { createServer } from 'node:http';
import { serveAsChild } from './lib/child-server.js';

const body = (orgId: string) => `{"accounts":[{"id":"acc_1","currency":"EUR","organizationId":"${orgId}"}]}`;

const server = createServer((request, response) => {
  const org = request.headers['x-organization-id'];
  const payload = body(typeof org === 'string' ? org : '');
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
  response.end(payload);
});
serveAsChild(server);
