// The routes file's loader (route-table/load.ts): one failing fixture per class of error with its
// exact line (FILE:LINE: /pointer: message), every error at once, the published schema current and
// rejecting the same fixtures the loader's schema does, and the files that must load.
import t from 'tap';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import fc from 'fast-check';
import { parse as parseYaml } from 'yaml';
import { BUILTIN_ROUTES_FILE } from '../../src/route-table/builtin.js';
import { compileRoutes, pathProblem } from '../../src/route-table/compile.js';
import { formatRouteError, loadRoutesFile, loadRoutesText, MAX_ROUTES_FILE_BYTES, parseRoutesText, type LoadContext } from '../../src/route-table/load.js';
import { MAX_PATH_LENGTH, PATH_PATTERN, routesSchemaJson } from '../../src/route-table/schema.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));
const context: LoadContext = { defaultUpstreamUrl: 'http://upstream.test:8000', upstreamTimeoutMs: 10_000, defaultAudience: undefined };

function errorLines(path: string): string[] {
  const loaded = loadRoutesFile(path, context);
  return loaded.ok ? [] : loaded.errors.map(formatRouteError);
}

/**
 * Each class of error, its fixture (test/route-table/fixtures/invalid/NAME.yaml) and every line
 * the loader must print for it, without the directory. `schema`: the published JSON Schema alone
 * refuses the file too (what a file is on its own); the rest need the whole file (the compiler).
 */
const INVALID: Record<string, { schema: boolean | 'yaml'; lines: string[] }> = {
  'yaml-syntax': { schema: 'yaml', lines: ['yaml-syntax.yaml:6: YAML: Nested mappings are not allowed in compact mappings', 'yaml-syntax.yaml:6: YAML: Implicit keys need to be on a single line'] },
  'yaml-duplicate-key': { schema: 'yaml', lines: ['yaml-duplicate-key.yaml:7: YAML: Map keys must be unique'] },
  'not-a-mapping': { schema: true, lines: ['not-a-mapping.yaml:1: /: must be a mapping with version and routes'] },
  version: { schema: true, lines: ['version.yaml:1: /version: version 2 is not supported: this gateway reads version 1'] },
  'unknown-top-level-key': { schema: true, lines: ['unknown-top-level-key.yaml:9: /rate_limits: unknown key "rate_limits" (the file takes version, upstreams, scopes, issuers, plans, defaultPlan, routes, paths)'] },
  'unknown-route-key': {
    schema: true,
    lines: [
      'unknown-route-key.yaml:5: /routes/0/match: is required (a route needs id, path, match, methods)',
      'unknown-route-key.yaml:7: /routes/0/mathc: unknown key "mathc" (a route takes id, path, match, credentials, methods, upstream, rateLimit, weakens, cost)',
    ],
  },
  'unknown-upstream-key': { schema: true, lines: ['unknown-upstream-key.yaml:3: /upstreams/reports/timeout: unknown key "timeout" (an upstream takes url, timeoutMs, audience)'] },
  'unknown-method': { schema: true, lines: ['unknown-method.yaml:8: /routes/0/methods/get: unknown key "get" (methods takes GET, POST, PUT, PATCH, DELETE, OPTIONS)'] },
  'head-listed': { schema: true, lines: ['head-listed.yaml:8: /routes/0/methods/HEAD: HEAD is never listed: it goes with GET'] },
  'missing-key': { schema: true, lines: ['missing-key.yaml:5: /routes/0/path: is required (a route needs id, path, match, methods)'] },
  'wrong-type': { schema: true, lines: ['wrong-type.yaml:3: /upstreams/default/timeoutMs: must be an integer'] },
  'match-value': { schema: true, lines: ['match-value.yaml:7: /routes/0/match: "prefix" is not one of exact, subtree'] },
  'issuer-undeclared': { schema: false, lines: ['issuer-undeclared.yaml:8: /routes/0/credentials/1: issuer corp is not declared under issuers'] },
  'issuer-algorithm': { schema: true, lines: ['issuer-algorithm.yaml:8: /issuers/corp/algorithms/1: "HS256" is not one of RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, EdDSA'] },
  'issuer-organization': { schema: true, lines: ['issuer-organization.yaml:8: /issuers/corp/organization: must be {claim: NAME} or {fixed: ORGANIZATION_ID}'] },
  'issuer-plain-http': {
    schema: false,
    lines: ['issuer-plain-http.yaml:6: /issuers/corp/issuer: must be https (http only on localhost)', 'issuer-plain-http.yaml:9: /issuers/corp/scopeMap/read: scope orders:reed is not declared under scopes'],
  },
  'credentials-value': { schema: true, lines: ['credentials-value.yaml:8: /routes/0/credentials: must be none, or a list of login_token, api_key and issuer:NAME (each once)'] },
  'path-form': { schema: true, lines: ['path-form.yaml:6: /routes/0/path: path "/accounts/" must not end with / (a subtree already holds the paths below it)'] },
  'path-encoded': { schema: true, lines: ['path-encoded.yaml:6: /routes/0/path: path "/accounts/%2e%2e" may hold only letters, digits and - _ ~ ! $ & \' ( ) + , = : @ . (no %, *, {, ;, ?, #, \\)'] },
  'scope-name': {
    schema: true,
    lines: [
      'scope-name.yaml:3: /scopes/Accounts.Read: scope name "Accounts.Read" is not resource:action (lower-case letters, digits, _ and -; e.g. invoices:read; at most 64 characters)',
      'scope-name.yaml:8: /routes/0/methods/GET: "Accounts.Read" is not a scope name (resource:action, e.g. invoices:read) nor public',
    ],
  },
  'id-form': { schema: true, lines: ['id-form.yaml:5: /routes/0/id: name "Accounts Route" must be lower-case letters, digits, _ . and -, starting with a letter or digit, at most 64 characters'] },
  'upstream-name': { schema: true, lines: ['upstream-name.yaml:3: /upstreams/Reports: name "Reports" must be lower-case letters, digits, _ . and -, starting with a letter or digit, at most 64 characters'] },
  'rate-limit-form': { schema: true, lines: ['rate-limit-form.yaml:9: /routes/0/rateLimit: "60 per minute" is not `<count>/<window>` with the window in s, m or h (e.g. `600/60s`), at most 1000000000 per 24h'] },
  'no-methods': { schema: true, lines: ['no-methods.yaml:8: /routes/0/methods: must list at least one method (GET, POST, PUT, PATCH, DELETE, OPTIONS)'] },
  'scope-undeclared': { schema: false, lines: ['scope-undeclared.yaml:8: /routes/0/methods/POST: scope accounts:write is not declared under scopes'] },
  'scope-builtin': { schema: false, lines: ['scope-builtin.yaml:3: /scopes/keys:read: scope keys:read is built in and may not be declared again'] },
  'duplicate-id': { schema: false, lines: ["duplicate-id.yaml:9: /routes/1/id: route id accounts is also route 0's"] },
  'duplicate-path': { schema: false, lines: ['duplicate-path.yaml:10: /routes/1/path: route 0 already has subtree /accounts'] },
  'path-case': { schema: false, lines: ["path-case.yaml:12: /routes/1/path: path /Accounts differs from route 0's /accounts only in letter case, and a case-insensitive upstream reads them as one"] },
  'paths-value': { schema: true, lines: ['paths-value.yaml:9: /paths/parameters: "drop" is not one of refuse, strip'] },
  'reserved-path': { schema: false, lines: ["reserved-path.yaml:6: /routes/0/path: path /auth/keys is the gateway's own (/auth and below)"] },
  'upstream-undeclared': { schema: false, lines: ['upstream-undeclared.yaml:9: /routes/0/upstream: upstream reports is not declared under upstreams'] },
  'upstream-without-url': { schema: false, lines: ['upstream-without-url.yaml:3: /upstreams/reports: upstream reports has no url (only default takes AUTHGATE_UPSTREAM_URL)'] },
  'upstream-bad-url': { schema: false, lines: ['upstream-bad-url.yaml:3: /upstreams/reports/url: must be http(s), without credentials, query or fragment'] },
  'public-with-scope': { schema: false, lines: ['public-with-scope.yaml:9: /routes/0/methods/GET: a public route (credentials: none) takes "public" for every method, not accounts:read'] },
  'public-without-none': { schema: false, lines: ['public-without-none.yaml:8: /routes/0/methods/GET: "public" needs credentials: none on the route'] },
  'weakens-unsaid': {
    schema: false,
    lines: ['weakens-unsaid.yaml:10: /routes/1: route accounts-status (/accounts/status) is under route accounts (/accounts) and takes credentials it does not (none against login_token); if that is meant, add weakens: accounts'],
  },
  'weakens-wrong': { schema: false, lines: ['weakens-wrong.yaml:14: /routes/1/weakens: weakens names accounts, which is no subtree route above /status'] },
  'plan-scope-undeclared': { schema: false, lines: ['plan-scope-undeclared.yaml:10: /plans/partner/scopes/1: scope admin:orders is not declared under scopes'] },
  'default-plan-undeclared': { schema: false, lines: ['default-plan-undeclared.yaml:7: /defaultPlan: plan gold is not declared under plans'] },
  'plan-quota-period': { schema: true, lines: ['plan-quota-period.yaml:7: /plans/free/quota/per: "week" is not one of day, month'] },
  'rate-limit-range': { schema: false, lines: ['rate-limit-range.yaml:9: /routes/0/rateLimit: "9999999999/1s" is not `<count>/<window>` with the window in s, m or h (e.g. `600/60s`), at most 1000000000 per 24h'] },
};

t.test('each class of error: its fixture fails with exactly its lines (file, line, JSON pointer, message)', async (t) => {
  const dir = join(fixtures, 'invalid');
  const files = readdirSync(dir).filter((f) => f.endsWith('.yaml')).map((f) => f.slice(0, -'.yaml'.length)).sort();
  t.same(files, Object.keys(INVALID).sort(), 'a fixture for each class, a class for each fixture');
  for (const [name, { lines }] of Object.entries(INVALID)) {
    const got = errorLines(join(dir, `${name}.yaml`)).map((line) => line.slice(dir.length + 1));
    t.same(got, lines, name);
    for (const line of got) t.notOk(line.includes('\n'), `${name}: one line`);
  }
});

t.test('the published schema (config/routes.schema.json) is the schema, and refuses what the loader\'s schema refuses', async (t) => {
  const published = readFileSync(join(root, 'config/routes.schema.json'), 'utf8');
  t.equal(published, `${JSON.stringify(routesSchemaJson(), null, 2)}\n`, 'current: npm run docs:routes-schema rewrites it');
  // As an editor or a CI job would use it: a fresh, strict validator on the file alone.
  const validate = new Ajv({ allErrors: true, strict: true }).compile(JSON.parse(published) as object);
  const dir = join(fixtures, 'invalid');
  for (const [name, { schema }] of Object.entries(INVALID)) {
    if (schema === 'yaml') continue; // not YAML at all: nothing for a schema to judge
    const value: unknown = parseYaml(readFileSync(join(dir, `${name}.yaml`), 'utf8'));
    t.equal(validate(value), !schema, `${name}: ${schema ? 'refused by the schema' : 'beyond a schema (the compiler refuses it)'}`);
    const parsed = parseRoutesText(readFileSync(join(dir, `${name}.yaml`), 'utf8'), name);
    t.equal(parsed.ok, !schema, `${name}: the loader's schema step agrees`);
  }
  for (const name of readdirSync(join(fixtures, 'valid'))) {
    t.ok(validate(parseYaml(readFileSync(join(fixtures, 'valid', name), 'utf8'))), `valid/${name}: accepted`);
  }
});

t.test('every error of a file at once, in the order of its lines', async (t) => {
  const text = [
    'version: 1', //                                                  1
    'scopes:', //                                                      2
    '  accounts:read: Read accounts', //                               3
    'routes:', //                                                      4
    '  - id: accounts', //                                             5
    '    path: /accounts', //                                          6
    '    match: subtree', //                                           7
    '    methods: { GET: accounts:read, DELETE: accounts:delete }', // 8
    '  - id: accounts', //                                             9
    '    path: /reports', //                                          10
    '    match: subtree', //                                          11
    '    upstream: reports', //                                       12
    '    methods: { GET: reports:read }', //                          13
  ].join('\n');
  const loaded = loadRoutesText(text, 'routes.yaml', context);
  t.same(loaded.ok ? [] : loaded.errors.map(formatRouteError), [
    'routes.yaml:8: /routes/0/methods/DELETE: scope accounts:delete is not declared under scopes',
    "routes.yaml:9: /routes/1/id: route id accounts is also route 0's",
    'routes.yaml:12: /routes/1/upstream: upstream reports is not declared under upstreams',
    'routes.yaml:13: /routes/1/methods/GET: scope reports:read is not declared under scopes',
  ]);
  // The schema's errors all at once too, with the compiler's on what had its shape (issue 46:
  // the undeclared scopes were said only once the shape was mended).
  const shapeless = loadRoutesText('version: 1\nroutes:\n  - { id: a, path: /a, mathc: exact, methods: { GET: a:read } }\n  - { id: b, path: b, match: exact, methods: { GET: b:read }, extra: 1 }\n', 'r.yaml', context);
  t.same(shapeless.ok ? [] : shapeless.errors.map(formatRouteError), [
    'r.yaml:3: /routes/0/match: is required (a route needs id, path, match, methods)',
    'r.yaml:3: /routes/0/mathc: unknown key "mathc" (a route takes id, path, match, credentials, methods, upstream, rateLimit, weakens, cost)',
    'r.yaml:3: /routes/0/methods/GET: scope a:read is not declared under scopes',
    'r.yaml:4: /routes/1/path: path "b" must start with /',
    'r.yaml:4: /routes/1/methods/GET: scope b:read is not declared under scopes',
    'r.yaml:4: /routes/1/extra: unknown key "extra" (a route takes id, path, match, credentials, methods, upstream, rateLimit, weakens, cost)',
  ]);
});

t.test('a misspelt key and an undeclared scope in one run: docs/routes.md\'s example (issue 46)', async (t) => {
  const text = [
    'version: 1', //                                                                   1
    'scopes:', //                                                                       2
    '  accounts:read: Read accounts', //                                                3
    'routes:', //                                                                       4
    '  - id: accounts', //                                                              5
    '    path: /accounts', //                                                           6
    '    mathc: subtree', //                                                            7
    '    methods: { GET: accounts:read, POST: accounts:write }', //                     8
    '  - id: reports', //                                                               9
    '    path: /v1/reports', //                                                        10
    '    match: subtree', //                                                           11
    '    upstream: reports', //                                                        12
    '    methods: { GET: reports:read }', //                                           13
  ].join('\n');
  const loaded = loadRoutesText(text, 'routes.yaml', context);
  t.same(loaded.ok ? [] : loaded.errors.map(formatRouteError), [
    'routes.yaml:5: /routes/0/match: is required (a route needs id, path, match, methods)',
    'routes.yaml:7: /routes/0/mathc: unknown key "mathc" (a route takes id, path, match, credentials, methods, upstream, rateLimit, weakens, cost)',
    'routes.yaml:8: /routes/0/methods/POST: scope accounts:write is not declared under scopes',
    'routes.yaml:12: /routes/1/upstream: upstream reports is not declared under upstreams',
    'routes.yaml:13: /routes/1/methods/GET: scope reports:read is not declared under scopes',
  ]);
});

t.test('the repair a shape error needs adds no error of its own: only the shape errors of good files made wrong', async (t) => {
  // Each valid fixture with one thing per route made wrong in shape: nothing but the shape's own
  // errors may come out (no undeclared scope, upstream, nesting or weakens that the repair made up).
  const breakers: Record<string, (route: Record<string, unknown>, i: number) => void> = {
    'a misspelt key': (route) => {
      route['mathc'] = route['match'];
      delete route['match'];
    },
    'a path of the wrong form': (route) => {
      route['path'] = `nope-${String(route['path'])}`;
    },
    'credentials of the wrong form': (route) => {
      route['credentials'] = 'everyone';
    },
    'an id of the wrong form': (route, i) => {
      route['id'] = `Route ${i}`;
    },
    'an unknown method': (route) => {
      route['methods'] = { ...(route['methods'] as object), FETCH: 'x:y' };
    },
    'a route that is no mapping': (route) => {
      for (const key of Object.keys(route)) delete route[key];
    },
  };
  for (const name of readdirSync(join(fixtures, 'valid')).filter((f) => f.endsWith('.yaml'))) {
    const file = parseYaml(readFileSync(join(fixtures, 'valid', name), 'utf8')) as { routes: Record<string, unknown>[]; scopes?: Record<string, string>; upstreams?: Record<string, unknown> };
    for (const [what, breakRoute] of Object.entries(breakers)) {
      for (let i = 0; i < file.routes.length; i++) {
        const broken = structuredClone(file);
        breakRoute(broken.routes[i]!, i);
        if (what === 'a route that is no mapping') (broken.routes as unknown[])[i] = 'accounts';
        const shape = parseRoutesText(JSON.stringify(broken), 'f.json');
        const whole = loadRoutesText(JSON.stringify(broken), 'f.json', context);
        t.notOk(shape.ok, `${name}, route ${i}, ${what}: refused`);
        t.same(whole.ok ? [] : whole.errors.map(formatRouteError), shape.ok ? [] : shape.errors.map(formatRouteError), `${name}, route ${i}, ${what}: the shape's errors, nothing more`);
      }
    }
    // A scope and an upstream of the wrong form: their users are not told again that they are undeclared.
    const scoped = structuredClone(file);
    const [firstScope] = Object.keys(scoped.scopes ?? {});
    if (firstScope !== undefined) {
      scoped.scopes![firstScope] = 42 as unknown as string;
      const shape = parseRoutesText(JSON.stringify(scoped), 'f.json');
      const whole = loadRoutesText(JSON.stringify(scoped), 'f.json', context);
      t.same(whole.ok ? [] : whole.errors.map(formatRouteError), shape.ok ? ['(accepted)'] : shape.errors.map(formatRouteError), `${name}: a scope's description of the wrong type`);
    }
    for (const upstream of Object.keys(file.upstreams ?? {})) {
      const wrong = structuredClone(file);
      wrong.upstreams![upstream] = { url: 'http://x.test', timeoutMs: 'soon' };
      const shape = parseRoutesText(JSON.stringify(wrong), 'f.json');
      const whole = loadRoutesText(JSON.stringify(wrong), 'f.json', context);
      t.same(whole.ok ? [] : whole.errors.map(formatRouteError), shape.ok ? ['(accepted)'] : shape.errors.map(formatRouteError), `${name}: upstream ${upstream} of the wrong form`);
    }
  }
});

t.test('the file must be readable, bounded, UTF-8 text, and its aliases bounded', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'authgate-routes-'));
  t.same(errorLines(join(dir, 'missing.yaml')), [`${join(dir, 'missing.yaml')}: cannot be read (ENOENT)`]);
  writeFileSync(join(dir, 'big.yaml'), `# ${'x'.repeat(MAX_ROUTES_FILE_BYTES)}\n`);
  t.same(errorLines(join(dir, 'big.yaml')), [`${join(dir, 'big.yaml')}: is larger than ${MAX_ROUTES_FILE_BYTES} bytes`]);
  writeFileSync(join(dir, 'latin1.yaml'), Buffer.from([0x76, 0x65, 0x72, 0x73, 0x69, 0x6f, 0x6e, 0x3a, 0x20, 0xe9, 0x0a]));
  t.same(errorLines(join(dir, 'latin1.yaml')), [`${join(dir, 'latin1.yaml')}: is not UTF-8 text`]);
  const laughs = ['version: 1', 'a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]', 'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]', 'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]', 'd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]', 'routes: []'].join('\n');
  const bombed = loadRoutesText(laughs, 'bomb.yaml', context);
  t.match(bombed.ok ? [] : bombed.errors.map(formatRouteError), [/^bomb\.yaml: YAML: Excessive alias count/]);
  // `__proto__` is a key like any other: unknown, never a prototype.
  const proto = loadRoutesText('{"version": 1, "routes": [], "__proto__": {"polluted": true}}', 'proto.json', context);
  t.same(proto.ok ? [] : proto.errors.map(formatRouteError), ['proto.json:1: /__proto__: unknown key "__proto__" (the file takes version, upstreams, scopes, issuers, plans, defaultPlan, routes, paths)']);
  t.equal(({} as Record<string, unknown>).polluted, undefined);
});

t.test('valid files load: YAML and JSON, the issue\'s example, the built-in table spelled out', async (t) => {
  for (const name of readdirSync(join(fixtures, 'valid'))) {
    const loaded = loadRoutesFile(join(fixtures, 'valid', name), context);
    t.ok(loaded.ok, `valid/${name}${loaded.ok ? '' : `: ${loaded.errors.map(formatRouteError).join(' | ')}`}`);
    if (loaded.ok) t.equal(loaded.table.source, join(fixtures, 'valid', name), 'the table names its file');
  }
  // Today's two routes as a file are today's table: the same hash as the built-in one.
  const builtin = compileRoutes(BUILTIN_ROUTES_FILE, { ...context, source: undefined });
  const spelled = loadRoutesFile(join(fixtures, 'valid', 'builtin.yaml'), context);
  t.ok(builtin.ok && spelled.ok && builtin.table.hash === spelled.table.hash, 'builtin.yaml compiles to the built-in table');
  const json = loadRoutesFile(join(fixtures, 'valid', 'builtin.json'), context);
  t.ok(builtin.ok && json.ok && builtin.table.hash === json.table.hash, 'and so does the same as JSON');
});

t.test('the schema\'s path pattern and the compiler\'s pathProblem agree on every path', async (t) => {
  const pattern = new RegExp(PATH_PATTERN, 'u');
  const schemaTakes = (path: string) => path.length <= MAX_PATH_LENGTH && pattern.test(path);
  const pieces = fc.constantFrom('/', 'a', 'Z', '9', '.', '..', '%', '%2e', '*', '{', ';', '?', '#', '\\', '-', '_', '~', ':', '@', ' ', 'é');
  fc.assert(
    fc.property(fc.array(pieces, { maxLength: 12 }), (parts) => {
      const path = parts.join('');
      return schemaTakes(path) === (pathProblem(path) === undefined);
    }),
    { numRuns: 5000 },
  );
  for (const path of ['/', '/accounts', '/a/b.c', '/.well', '/a..b']) t.ok(schemaTakes(path) && pathProblem(path) === undefined, `${path} is a path`);
  for (const path of ['', 'a', '/a/', '//a', '/./a', '/a/..', '/a%2f', '/a*', `/${'a'.repeat(MAX_PATH_LENGTH)}`]) t.ok(!schemaTakes(path) && pathProblem(path) !== undefined, `${path} is not`);
});

t.test('docs/routes.md: its example is the example fixture and its built-in table the built-in one', async (t) => {
  const doc = readFileSync(join(root, 'docs/routes.md'), 'utf8');
  const blocks = [...doc.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!);
  t.equal(blocks.length, 2);
  const [example, builtin] = blocks as [string, string];
  const loaded = loadRoutesText(example, 'docs/routes.md', context);
  t.ok(loaded.ok, 'the example loads');
  t.same(parseYaml(example), parseYaml(readFileSync(join(fixtures, 'valid', 'example.yaml'), 'utf8')), 'and is the fixture the tests use');
  const table = loadRoutesText(builtin, 'docs/routes.md', context);
  const expected = compileRoutes(BUILTIN_ROUTES_FILE, { ...context, source: undefined });
  t.ok(table.ok && expected.ok && table.table.hash === expected.table.hash, 'the built-in table, spelled out');
});
