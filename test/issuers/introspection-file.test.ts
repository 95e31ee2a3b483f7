// The routes file's `introspection: {url, clientId, clientSecretFile}` (issue 49): the shape and
// the secret file checked at load (and so by `authgate routes check`), each problem placed on its
// line; the secret read beside the routes file, and never in an error, the compiled table's JSON
// or the check's output; a rotated secret is a changed table (so a reload applies it).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inspect } from 'node:util';
import t from 'tap';
import { formatRouteError, loadRoutesText, type LoadContext } from '../../src/route-table/load.js';

const CLI = fileURLToPath(new URL('../../dist/cli/authgate.js', import.meta.url));
const context: LoadContext = { defaultUpstreamUrl: 'http://upstream.test:8000', upstreamTimeoutMs: 10_000, defaultAudience: undefined };
const SECRET = `s3cret-${randomBytes(12).toString('hex')}`;

function fileOf(issuers: string[], routes = ['  - { id: orders, path: /orders, match: subtree, credentials: [issuer:corp], methods: { GET: orders:read } }']): string {
  return ['version: 1', 'scopes: { orders:read: Read orders }', 'issuers:', ...issuers, 'routes:', ...routes, ''].join('\n');
}
const corp = (extra = '', introspection = 'url: https://idp.example.com/introspect, clientId: authgate, clientSecretFile: client-secret') =>
  `  corp: { issuer: https://idp.example.com/, audiences: [api], organization: { claim: org_id }, introspection: { ${introspection} }${extra} }`;

t.test('introspection in the routes file: checked at load, the secret read beside the file and never shown', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'authgate-introspection-file-'));
  writeFileSync(join(dir, 'client-secret'), `${SECRET}\n`);
  const path = join(dir, 'routes.yaml');
  const load = (text: string) => loadRoutesText(text, path, context);
  /** The errors, each without the routes file's directory. */
  const errors = (text: string) => {
    const loaded = load(text);
    return loaded.ok ? [] : loaded.errors.map((error) => formatRouteError(error).replace(`${dir}/routes.yaml`, 'routes.yaml'));
  };

  const good = load(fileOf([corp()]));
  t.ok(good.ok, good.ok ? 'a valid file' : good.errors.map(formatRouteError).join(' | '));
  if (!good.ok) return;
  const compiled = good.table.issuers.get('corp')!;
  t.equal(compiled.introspection?.clientSecret.reveal(), SECRET, 'the secret read from the file beside the routes file, its newline dropped');
  t.notOk(JSON.stringify([...good.table.issuers.values()]).includes(SECRET), "not in the table's JSON");
  t.notOk(inspect(good.table, { depth: 10 }).includes(SECRET), 'nor in what util.inspect (a log of the table) shows');

  writeFileSync(join(dir, 'client-secret'), `${SECRET}-rotated\n`);
  const rotated = load(fileOf([corp()]));
  t.ok(rotated.ok && rotated.table.hash !== good.table.hash, 'a rotated secret is a changed table: a reload applies it');

  t.same(errors(fileOf([corp('', 'url: https://idp.example.com/introspect, clientId: authgate, clientSecretFile: missing')])), [
    `routes.yaml:4: /issuers/corp/introspection/clientSecretFile: ${join(dir, 'missing')} cannot be read (ENOENT)`,
  ]);
  writeFileSync(join(dir, 'empty'), '\n');
  t.same(errors(fileOf([corp('', 'url: https://idp.example.com/introspect, clientId: authgate, clientSecretFile: empty')])), [`routes.yaml:4: /issuers/corp/introspection/clientSecretFile: ${join(dir, 'empty')} is empty`]);
  t.same(errors(fileOf([corp('', 'url: http://idp.example.com/introspect, clientId: authgate, clientSecretFile: client-secret')])), ['routes.yaml:4: /issuers/corp/introspection/url: must be https (http only on localhost)']);
  t.same(errors(fileOf([corp(', jwksUri: https://idp.example.com/keys')])), ['routes.yaml:4: /issuers/corp/jwksUri: an issuer with introspection has no key set: its tokens are checked at the endpoint']);
  const second = '  other: { issuer: https://other.example.com/, audiences: [api], organization: { claim: org_id }, introspection: { url: https://other.example.com/introspect, clientId: authgate, clientSecretFile: client-secret } }';
  const both = '  - { id: both, path: /both, match: subtree, credentials: [issuer:corp, api_key, issuer:other], methods: { GET: orders:read } }';
  t.same(errors(fileOf([corp(), second], [both])), ['routes.yaml:7: /routes/0/credentials: a route takes at most one issuer with introspection (an opaque token names no issuer): corp, other']);
  const apart = ['  - { id: orders, path: /orders, match: subtree, credentials: [issuer:corp], methods: { GET: orders:read } }', '  - { id: other, path: /other, match: subtree, credentials: [issuer:other], methods: { GET: orders:read } }'];
  t.ok(load(fileOf([corp(), second], apart)).ok, 'two introspecting issuers, each on routes of its own');
  t.match(errors(fileOf([corp('', 'url: https://idp.example.com/introspect, clientId: authgate')])).join('\n'), /\/issuers\/corp\/introspection\/clientSecretFile: is required/);
  t.match(errors(fileOf([corp('', 'url: https://idp.example.com/introspect, clientId: authgate, clientSecretFile: client-secret, clientSecret: x')])).join('\n'), /unknown key "clientSecret"/, 'no secret in the routes file itself');
  const jwt = '  jwt: { issuer: https://idp.example.com/, audiences: [api], organization: { claim: org_id } }';
  t.ok(load(fileOf([corp(), jwt])).ok, "a JWT issuer may share the introspecting one's `iss` (the same provider's JWT and opaque tokens)");
});

t.test('routes check: an introspection issuer valid offline (exit 0, a warning when its endpoint cannot be reached), the secret never printed', async (t) => {
  const server = createServer((_req, res) => res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"invalid_client"}'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const up = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const dir = mkdtempSync(join(tmpdir(), 'authgate-introspection-check-'));
  writeFileSync(join(dir, 'client-secret'), SECRET);
  const check = async (url: string) => {
    const file = join(dir, 'routes.yaml');
    writeFileSync(file, fileOf([`  corp: { issuer: ${up}, audiences: [api], organization: { claim: org_id }, introspection: { url: ${url}, clientId: authgate, clientSecretFile: client-secret } }`]));
    return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(process.execPath, [CLI, 'routes', 'check', file], { env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8', timeout: 60_000 }, (_error, stdout, stderr) => resolve({ status: child.exitCode, stdout, stderr }));
    });
  };
  const reached = await check(`${up}/token/introspection`);
  t.equal(reached.status, 0, reached.stderr);
  t.equal(reached.stderr, '', 'an endpoint that answers (401 to no credentials) is reached: no warning');
  const explained = await new Promise<string>((resolve) => execFile(process.execPath, [CLI, 'routes', 'explain', 'GET', '/orders/1', '--file', join(dir, 'routes.yaml')], { env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8', timeout: 60_000 }, (_error, stdout) => resolve(stdout)));
  t.match(explained, new RegExp(`corp: opaque tokens introspected at ${up}/token/introspection as client authgate \\(active answers kept ≤ 60 s\\)`), 'routes explain names the endpoint and the client');
  t.notOk(explained.includes(SECRET), 'and never the secret');
  const down = await check('http://127.0.0.1:9/token/introspection');
  t.equal(down.status, 0, 'unreachable is no error');
  t.match(down.stderr, /^authgate: warning: issuers\.corp: http:\/\/127\.0\.0\.1:9\/token\/introspection could not be reached \(.*answers its tokens 503/);
  t.notOk(`${reached.stdout}${reached.stderr}${down.stdout}${down.stderr}`.includes(SECRET), 'the secret is never printed by check');
});
