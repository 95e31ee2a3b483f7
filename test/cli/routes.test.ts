// `authgate routes check FILE` and `authgate routes explain METHOD PATH [--file FILE]` (the built
// CLI, as an operator runs it): exit codes, every error with its line, and the decision explained.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../dist/cli/authgate.js', import.meta.url));
const fixtures = fileURLToPath(new URL('../route-table/fixtures/', import.meta.url));

function cli(args: string[], env: Record<string, string> = {}) {
  const run = spawnSync(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8', timeout: 60_000 });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

t.test('routes check: 0 and a summary for a valid file; 1 and every error for a bad one; 2 for a usage error', async (t) => {
  const good = cli(['routes', 'check', `${fixtures}valid/example.yaml`]);
  t.equal(good.status, 0, good.stderr);
  t.match(good.stdout, /^authgate: \S+example\.yaml is valid: 4 routes, 2 upstreams, 6 scopes, hash [0-9a-f]{16}\n$/);
  t.equal(good.stderr, '');

  const file = `${fixtures}invalid/scope-name.yaml`;
  const bad = cli(['routes', 'check', file]);
  t.equal(bad.status, 1);
  t.equal(bad.stdout, '');
  t.equal(
    bad.stderr,
    [
      `${file}:3: /scopes/Accounts.Read: scope name "Accounts.Read" is not resource:action (lower-case letters, digits, _ and -; e.g. invoices:read; at most 64 characters)`,
      `${file}:8: /routes/0/methods/GET: "Accounts.Read" is not a scope name (resource:action, e.g. invoices:read) nor public`,
      `authgate: ${file}: 2 errors; the gateway would not take this file`,
      '',
    ].join('\n'),
  );
  // A secret in an upstream URL stays out of the output.
  const secret = cli(['routes', 'check', `${fixtures}invalid/upstream-bad-url.yaml`]);
  t.equal(secret.status, 1);
  t.notMatch(secret.stderr, /s3cret/);

  // A missing or unknown subcommand prints the whole usage, as for every family (authgate org);
  // a wrong use of a known one, the hint.
  for (const args of [['routes'], ['routes', 'lint', 'a']]) {
    const usage = cli(args);
    t.equal(usage.status, 2, args.join(' '));
    t.match(usage.stderr, /^authgate: (missing|unknown) routes subcommand.*\n\nUsage: authgate <command>/);
  }
  for (const args of [['routes', 'check'], ['routes', 'check', 'a', 'b'], ['routes', 'check', '--bogus', 'a']]) {
    const usage = cli(args);
    t.equal(usage.status, 2, args.join(' '));
    t.match(usage.stderr, /^authgate: .*\nRun 'authgate --help' for usage\.\n$/);
  }
});

t.test('routes check: a misspelt key and an undeclared scope, both in one run, each with its line (issue 46)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'authgate-routes-check-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'routes.yaml');
  // docs/routes.md's example of "every error at once".
  writeFileSync(file, ['version: 1', 'scopes:', '  accounts:read: Read accounts', 'routes:', '  - id: accounts', '    path: /accounts', '    mathc: subtree', '    methods: { GET: accounts:read, POST: accounts:write }', ''].join('\n'));
  const run = cli(['routes', 'check', file]);
  t.equal(run.status, 1);
  t.equal(
    run.stderr,
    [
      `${file}:5: /routes/0/match: is required (a route needs id, path, match, methods)`,
      `${file}:7: /routes/0/mathc: unknown key "mathc" (a route takes id, path, match, credentials, methods, upstream, rateLimit, weakens, cost)`,
      `${file}:8: /routes/0/methods/POST: scope accounts:write is not declared under scopes`,
      `authgate: ${file}: 3 errors; the gateway would not take this file`,
      '',
    ].join('\n'),
  );
});

t.test('routes explain: the route, scope, credentials and upstream, or why none', async (t) => {
  const file = `${fixtures}valid/example.yaml`;
  const reports = cli(['routes', 'explain', 'GET', '/v1/reports/7?x=1', '--file', file]);
  t.equal(reports.status, 0, reports.stderr);
  t.match(reports.stdout, /^GET \/v1\/reports\/7\?x=1: forwarded\n  route +reports \(subtree \/v1\/reports\)\n  credentials +login_token, api_key\n  scope +reports:read\n  upstream +reports: http:\/\/reports\.internal:8080\/v2, as \/v2\/v1\/reports\/7 \(timeout 30000 ms\)\n  rate limit +60\/60s per credential/);

  const health = cli(['routes', 'explain', 'HEAD', '/healthz', '--file', file], { AUTHGATE_UPSTREAM_URL: 'http://api.internal:8000/api' });
  t.equal(health.status, 0);
  t.match(health.stdout, /credentials +none: public/);
  t.match(health.stdout, /scope +none \(public route\)/);
  t.match(health.stdout, /upstream +default: http:\/\/api\.internal:8000\/api, as \/api\/healthz/);

  const cases: [string[], RegExp][] = [
    [['DELETE', '/organization/me'], /405: route organization-me \(exact \/organization\/me\) does not forward DELETE; Allow: GET, HEAD \(no fall back/],
    [['GET', '/organization/me/x'], /404: no route holds this path/],
    [['GET', '/accountsX'], /404: no route holds this path/],
    [['GET', '/accounts/%2e%2e/keys'], /404: the path guard refuses it/],
    [['GET', '/accounts/%252e%252e/'], /400: the path guard refuses it/],
    [['GET', '/auth/keys'], /the gateway's own path \(\/auth and below\)/],
  ];
  for (const [args, expected] of cases) {
    const run = cli(['routes', 'explain', ...args, '--file', file]);
    t.equal(run.status, 1, args.join(' '));
    t.match(run.stdout, expected, args.join(' '));
  }
  // Without --file: AUTHGATE_ROUTES_FILE, else the built-in table.
  const fromEnv = cli(['routes', 'explain', 'GET', '/healthz'], { AUTHGATE_ROUTES_FILE: file });
  t.equal(fromEnv.status, 0);
  const builtin = cli(['routes', 'explain', 'GET', '/healthz']);
  t.equal(builtin.status, 1);
  t.match(builtin.stdout, /table +the built-in table/);
  t.equal(cli(['routes', 'explain', 'GET', '/accounts/1']).status, 0);

  const broken = cli(['routes', 'explain', 'GET', '/x', '--file', `${fixtures}invalid/version.yaml`]);
  t.equal(broken.status, 2);
  t.match(broken.stderr, /version\.yaml:1: \/version: version 2 is not supported/);
  t.equal(cli(['routes', 'explain', 'get', '/x']).status, 2, 'methods are upper-case');
  t.equal(cli(['routes', 'explain', 'GET']).status, 2);
});

t.test('routes check warns (and passes) where a route sits in a subtree that asks less (issue 45)', async (t) => {
  const file = `${fixtures}valid/public-root.yaml`;
  const run = cli(['routes', 'check', file]);
  t.equal(run.status, 0, 'warnings never fail the check');
  t.match(run.stdout, /^authgate: \S+public-root\.yaml is valid: 5 routes, 1 upstream, 5 scopes, hash [0-9a-f]{16}; 4 warnings\n$/);
  const lines = run.stderr.trimEnd().split('\n');
  t.equal(lines.length, 4, run.stderr);
  for (const [i, [line, inner]] of ([[14, 'admin (subtree /admin)'], [18, 'invoices (exact /v1/invoices)'], [22, 'api (subtree /api)']] as const).entries()) {
    t.equal(
      lines[i],
      `${file}:${line}: /routes/${i + 1}: warning: route ${inner} sits in route site (subtree /), which asks less (none against login_token, api_key): the spellings of ${inner.split(' ')[2]!.slice(0, -1)} authgate knows are ${inner.split(' ')[0]}'s or refused, but one an upstream reads as ${inner.split(' ')[2]!.slice(0, -1)} in a way authgate does not know would be site's; a default that asks more, with public routes as exceptions, fails closed`,
    );
  }
  t.equal(
    lines[3],
    `${file}:26: /routes/4: warning: route api-docs (exact /api/docs) sits in route api (subtree /api) and asks less: /api/DOCS, /api/docs/ and other spellings in another letter case or with a trailing slash are refused (400, 1240), as a case-sensitive upstream reads them as api's; clients must spell /api/docs exactly`,
  );
  // A file without such nesting has none (the example above: stderr empty).
});

t.test('routes explain: a path some server reads as another route\'s (issue 45)', async (t) => {
  const file = `${fixtures}valid/public-root.yaml`;
  for (const target of ['/admin;x/users', '//admin/users', '/api/DOCS']) {
    const run = cli(['routes', 'explain', 'GET', target, '--file', file]);
    t.equal(run.status, 1, target);
    t.match(run.stdout, new RegExp(`^GET ${target.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: not forwarded: 400 \\(1240, (path_parameter|empty_path_segment|path_variant_weaker)\\): `), target);
  }
  const spelled = cli(['routes', 'explain', 'GET', '/V1/INVOICES', '--file', file]);
  t.equal(spelled.status, 0, spelled.stderr);
  t.match(spelled.stdout, /^GET \/V1\/INVOICES: forwarded\n  route +invoices \(exact \/v1\/invoices\)\n/);
});

t.test('the help lists both', async (t) => {
  const help = cli(['--help']);
  t.match(help.stdout, /routes check <file>/);
  t.match(help.stdout, /routes explain <METHOD> <path> \[--file <file>\]/);
});

t.test('routes check with issuers: valid offline (exit 0), a warning per issuer whose keys cannot be reached; none for one that answers', async (t) => {
  const { createServer } = await import('node:http');
  const { mkdtempSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  // An issuer that answers its discovery document, and one on a port nothing listens on.
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const up = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const dir = mkdtempSync(join(tmpdir(), 'authgate-issuers-'));
  const file = join(dir, 'routes.yaml');
  writeFileSync(file, [
    'version: 1',
    'scopes: { orders:read: Read orders }',
    'issuers:',
    `  up: { issuer: ${up}, audiences: [api], organization: { claim: org_id } }`,
    '  down: { issuer: http://127.0.0.1:9, audiences: [api], organization: { fixed: org_1 } }',
    'routes:',
    '  - { id: orders, path: /orders, match: subtree, credentials: [issuer:up, issuer:down], methods: { GET: orders:read } }',
    '',
  ].join('\n'));
  // Not spawnSync: the issuer that answers is served from this process, whose loop must run meanwhile.
  const { execFile } = await import('node:child_process');
  const run = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(process.execPath, [CLI, 'routes', 'check', file], { env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8', timeout: 60_000 }, (_error, stdout, stderr) => resolve({ status: child.exitCode, stdout, stderr }));
  });
  t.equal(run.status, 0, 'valid: unreachable discovery is no error');
  t.match(run.stdout, /is valid: 1 route/);
  t.match(run.stderr, /^authgate: warning: issuers\.down: http:\/\/127\.0\.0\.1:9\/\.well-known\/openid-configuration could not be reached \(/);
  t.notMatch(run.stderr, /issuers\.up/, 'no warning for the issuer that answers');
});

t.test('routes explain names the issuers that would verify a provider token on the route (issue 49)', async (t) => {
  const file = `${fixtures}valid/issuers.yaml`;
  const run = cli(['routes', 'explain', 'GET', '/api/v2/orders/1', '--file', file]);
  t.equal(run.status, 0, run.stderr);
  const lines = run.stdout.split('\n');
  const at = lines.findIndex((line) => line.startsWith('  credentials  '));
  t.equal(lines[at], '  credentials  login_token, api_key, issuer:corp, issuer:partner');
  t.equal(lines[at + 1], '  issuers      corp: tokens with iss https://login.example.com/ (keys https://login.example.com/keys), aud https://api.example.com, alg RS256 or ES256, typ at+jwt; organization: its external id in claim org_id; scopes: scope');
  t.equal(lines[at + 2], '               partner: tokens with iss https://partner.example.net (keys by discovery at https://partner.example.net/.well-known/openid-configuration), aud api://orders, alg RS256; organization: org_single for every token; scopes: scope, then scp, renamed by scopeMap');
  t.match(lines[at + 3], /^ {2}scope {8}orders:read$/);
  t.notMatch(cli(['routes', 'explain', 'GET', '/accounts']).stdout, /issuers/, 'a route without issuers: no issuers line');
});
