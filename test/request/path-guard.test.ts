import type { FastifyReply, FastifyRequest } from 'fastify';
import t from 'tap';
import { isAmbiguousPath, isDoublyEncodedPath, pathGuard } from '../../src/request/path-guard.js';

/** request/path-guard.ts: a forwarded path must mean to the upstream what it meant to the router. */

function guard(url: string, headers: Record<string, string> = {}): { problem?: string; reason?: string } | undefined {
  let outcome: Error | undefined;
  pathGuard({ raw: { url }, headers } as unknown as FastifyRequest, {} as FastifyReply, (error) => (outcome = error));
  return outcome as { problem?: string; reason?: string } | undefined;
}

t.test('plain paths pass, queries are not judged', async (t) => {
  for (const url of ['/accounts', '/accounts/42', '/accounts/a.b/c..d', '/accounts/%20', '/accounts/%C3%A9', '/accounts?next=/../x', '/accounts?q=%2f', '/accounts/...']) {
    t.equal(guard(url), undefined, url);
    t.notOk(isAmbiguousPath(url), url);
  }
});

t.test('dot segments, encoded slashes and backslashes, and non-origin targets: 404', async (t) => {
  const ambiguous = ['/accounts/../x', '/accounts/./x', '/accounts/..', '/accounts/%2e%2e/x', '/accounts/%2E./x', '/accounts/.%2e', '/accounts/a%2fb', '/accounts/a%2Fb', '/accounts/a%5cb', '/accounts/a\\b', 'http://evil/accounts', '*', '/%61ccounts', '/accounts/%41', '/accounts/a%7eb', '/accounts/%2D'];
  for (const url of ambiguous) {
    t.ok(isAmbiguousPath(url), url);
    t.match(guard(url), { problem: 'notFound', reason: 'ambiguous_path' }, url);
  }
});

t.test('a body in a transfer coding other than plain chunked: 400 transfer_coding', async (t) => {
  for (const coding of ['gzip, chunked', 'deflate,chunked', 'identity']) {
    t.match(guard('/accounts', { 'transfer-encoding': coding }), { problem: 'badRequest', reason: 'transfer_coding' }, coding);
  }
  for (const coding of ['chunked', 'Chunked', ' chunked ']) t.equal(guard('/accounts', { 'transfer-encoding': coding }), undefined, coding);
});

t.test('ambiguous once decoded: 400 double_encoded_path', async (t) => {
  for (const url of ['/accounts/%252e%252e/x', '/accounts/a%252fb', '/accounts/a%255cb', '/accounts/%252E%252E']) {
    t.ok(isDoublyEncodedPath(url), url);
    t.match(guard(url), { problem: 'badRequest', reason: 'double_encoded_path' }, url);
  }
  t.notOk(isDoublyEncodedPath('/accounts/100%25'), 'a percent sign that decodes to nothing ambiguous');
  t.notOk(isDoublyEncodedPath('/accounts/plain'));
  t.ok(isDoublyEncodedPath('/accounts/%E0%A4%A'), 'undecodable: never forwarded');
});
