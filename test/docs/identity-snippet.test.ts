import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import t, { type Test } from 'tap';
import { startGateway } from '../helpers/gateway.js';

/**
 * docs/identity.md ("Verifying the identity in your service", moved there from the README): its
 * snippet, as printed, run against assertions a real gateway sent to a real upstream. Only the three
 * constants at its top are replaced.
 */

const root = new URL('../../', import.meta.url);
const page = readFileSync(new URL('docs/identity.md', root), 'utf8');
const blocks = [...page.matchAll(/^```ts\n(\/\/ verify-identity\.ts\n[\s\S]*?)^```$/gm)];
// Thrown, not asserted: tap's root test must not start before the setup below is done.
if (blocks.length !== 1) throw new Error(`docs/identity.md has ${blocks.length} \`// verify-identity.ts\` blocks, not one`);
const snippet = blocks[0]![1]!;

/** The snippet with its constant `name` set to `value`; the constant must be there, once. */
function withConstant(source: string, name: string, value: string): string {
  const line = new RegExp(`^const ${name} = '[^']*';`, 'm');
  if (source.split('\n').filter((l) => line.test(l)).length !== 1) throw new Error(`the docs/identity.md snippet does not declare ${name} once`);
  return source.replace(line, `const ${name} = ${JSON.stringify(value)};`);
}

const ISSUER = 'authgate-docs';
const gw = await startGateway(t, { env: { AUTHGATE_JWT_ISSUER: ISSUER } });

// The public port, as docs/identity.md recommends (the JWKS is served there by default).
let source = withConstant(snippet, 'JWKS_URL', `${gw.publicUrl}/.well-known/jwks.json`);
source = withConstant(source, 'ISSUER', ISSUER);
source = withConstant(source, 'AUDIENCE', gw.upstream.url); // the default audience: the upstream's origin
// Inside the repository, so `jose` resolves from its node_modules; a dot file, so no test glob takes it.
const file = fileURLToPath(new URL(`test/.snippet-${process.pid}.ts`, root));
await writeFile(file, source);
t.teardown(() => rm(file, { force: true }));

type Identity = { id: string; name: string; email: string; scopes: string[]; kind: 'jwt' | 'api_key'; keyId: string | null };
const { verifyIdentity } = (await import(pathToFileURL(file).href)) as { verifyIdentity: (header: string | string[] | undefined) => Promise<Identity> };

/** The assertion the upstream received for a request to GET /organization/me with `credential`. */
async function assertionFor(t: Test, credential: string): Promise<{ token: string; scopes: string }> {
  const res = await gw.get('/organization/me', { authorization: `Bearer ${credential}` });
  t.equal(res.status, 200);
  const headers = gw.upstream.requests.at(-1)!.headers;
  return { token: headers['x-authgate-identity'] as string, scopes: headers['x-organization-scopes'] as string };
}

const email = `readme-${process.pid}@example.test`;
const org = await gw.createOrganization({ name: 'Readme Org', email });
const token = await gw.login(email, org.password);
const key = await gw.createApiKey(token);

t.test('the snippet type-checks as printed (strict)', async (t) => {
  const tsc = fileURLToPath(new URL('node_modules/typescript/bin/tsc', root));
  const args = ['--noEmit', '--strict', '--skipLibCheck', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--types', 'node', file];
  const outcome = await promisify(execFile)(process.execPath, [tsc, ...args], { cwd: fileURLToPath(root) }).then(
    () => 'compiles',
    (error: Error & { stdout?: string; stderr?: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}` || error.message,
  );
  t.equal(outcome, 'compiles', 'no type errors');
});

t.test('it returns the organization the gateway named, for an API key and a login token', async (t) => {
  const viaKey = await assertionFor(t, key.apiKey);
  t.same(await verifyIdentity(viaKey.token), { id: org.id, name: 'Readme Org', email, scopes: viaKey.scopes.split(' '), kind: 'api_key', keyId: key.id });
  const viaToken = await assertionFor(t, token);
  t.same(await verifyIdentity(viaToken.token), { id: org.id, name: 'Readme Org', email, scopes: viaToken.scopes.split(' '), kind: 'jwt', keyId: null });
});

t.test('it throws for a tampered, truncated or missing assertion', async (t) => {
  const { token: valid } = await assertionFor(t, key.apiKey);
  const [head, body, signature] = valid.split('.') as [string, string, string];
  const claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Record<string, unknown>;
  const forge = (change: Record<string, unknown>) => `${head}.${Buffer.from(JSON.stringify({ ...claims, ...change })).toString('base64url')}.${signature}`;
  await t.rejects(verifyIdentity(forge({ sub: 'org_someone_else' })), 'another organization');
  await t.rejects(verifyIdentity(forge({ exp: (claims['exp'] as number) + 3600 })), 'a longer life');
  await t.rejects(verifyIdentity(`${head}.${body}.`), 'no signature');
  await t.rejects(verifyIdentity(`${head}.${body}`), 'truncated');
  await t.rejects(verifyIdentity(undefined), 'no header');
  await t.rejects(verifyIdentity([valid, valid]), 'the header twice');
  t.same((await verifyIdentity(valid)).id, org.id, 'the untouched one still verifies');
});
