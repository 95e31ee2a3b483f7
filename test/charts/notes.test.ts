/**
 * The chart's NOTES (issue 46): what `helm install` prints must be a first step that works, in each
 * mode. Rendered by the real Helm 3 (test/helpers/helm-notes.ts); the commands of the first steps
 * are then run against the built gateway as a real process, with only the port-forwarded ports
 * changed: the CLI command run in the pod, every curl of the public and ops ports (none may be a
 * 404, as `curl http://127.0.0.1:8080/` was), and with authz.enabled the authz Service's URLs on
 * the gateway's authz port. The names NOTES give (the authz Service, the routes-check Job, the
 * routes ConfigMap) are checked against what Helm renders.
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { REPO_ROOT, getHelm, renderChart, type K8sObject } from '../helpers/helm.js';
import { renderNotes } from '../helpers/helm-notes.js';
import { ADMIN_TOKEN } from '../helpers/gateway.js';
import { startGatewayProcess } from '../helpers/gateway-process.js';
import { freePort } from '../helpers/redis.js';

const work = mkdtempSync(join(tmpdir(), 'authgate-chart-notes-'));
t.teardown(() => rmSync(work, { recursive: true, force: true }));
let n = 0;
function valuesFile(values: object): string {
  const path = join(work, `values-${n++}.yaml`);
  writeFileSync(path, stringify(values));
  return path;
}
const BASE = { config: { upstreamUrl: 'http://api.apps.svc.cluster.local:8080' } };
const AUTHZ = { authz: { enabled: true, trustedProxies: ['10.42.0.0/16'], grpcPort: 9092 } };
const ROUTES_FILE = {
  version: 1,
  upstreams: { default: {} },
  scopes: { 'orders:read': 'Read orders' },
  routes: [{ id: 'orders', path: '/api/v2/orders', match: 'subtree', methods: { GET: 'orders:read' } }],
};
const notes = (values: object = {}) => renderNotes({ valuesFiles: [valuesFile(BASE), valuesFile(values)] });
const manifests = (values: object = {}) => renderChart({ valuesFiles: [valuesFile(BASE), valuesFile(values)] });
const named = (docs: K8sObject[], kind: string) => docs.filter((d) => d.kind === kind).map((d) => d.metadata.name);

const curl = spawnSync('curl', ['--version']);

t.before(() => {
  getHelm();
});

t.test('public mode: the first steps run as printed against a gateway, and none is a 404', { skip: curl.error ? 'curl not installed' : false }, async (t) => {
  const text = await notes();
  t.notMatch(text, /curl http:\/\/127\.0\.0\.1:8080\/\s*$/m, 'no curl of / (a 404)');
  const lines = text.split('\n').map((line) => line.trim());
  t.ok(lines.includes('kubectl -n authgate port-forward svc/authgate-ops 9090:9090 &'), 'the ops Service forwarded');
  t.ok(lines.includes('kubectl -n authgate port-forward svc/authgate 8080:80 &'), 'the public Service forwarded');

  const gw = await startGatewayProcess({ AUTHGATE_ADMIN_TOKEN: ADMIN_TOKEN, NODE_ENV: 'development' });
  t.teardown(() => {
    gw.child.kill('SIGTERM');
  });
  const publicHost = new URL(gw.publicUrl).host;
  const opsHost = new URL(gw.opsUrl).host;
  const password = 'a long enough first password';

  // Step 2 as the pod runs it: the CLI after `--`, with the pod's environment (token and ops port).
  const exec = lines.find((line) => / exec -it deploy\/authgate -c authgate -- /.test(line));
  t.ok(exec, 'the organization is made with the CLI in a pod of the Deployment');
  const inPod = exec!.slice(exec!.indexOf(' -- ') + 4);
  const created = spawnSync('bash', ['-c', inPod], {
    cwd: REPO_ROOT,
    input: `${password}\n`,
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '', AUTHGATE_ADMIN_TOKEN: ADMIN_TOKEN, AUTHGATE_OPS_PORT: String(new URL(gw.opsUrl).port) },
  });
  t.equal(created.status, 0, `the CLI command runs: ${created.stderr}`);
  t.match(created.stdout, /"email": ?"owner@acme\.test"/, 'and creates the organization the login step uses');

  // Every curl, as printed, through the forwarded ports; the placeholder is the password typed in step 2.
  const curls = lines.filter((line) => line.startsWith('curl '));
  t.ok(curls.length >= 4, 'readyz, login, the JWKS and the admin API');
  for (const line of curls) {
    const command = line
      .replace(/^curl /, "curl -s -w '\\n@%{http_code}' ")
      .replaceAll('127.0.0.1:8080', publicHost)
      .replaceAll('127.0.0.1:9090', opsHost)
      .replaceAll('<the password>', password);
    const res = spawnSync('bash', ['-c', command], { encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '', ADMIN_TOKEN } });
    const status = /@(\d+)\s*$/.exec(res.stdout)?.[1];
    t.equal(status, '200', `${line} answers 200`);
    if (line.includes('/auth/login')) t.match(res.stdout, /"token":"/, 'the login answers a token');
  }
});

t.test('authz.enabled: NOTES name the authz Service and its endpoints, and those answer on the authz port', async (t) => {
  const text = await notes(AUTHZ);
  const docs = await manifests(AUTHZ);
  t.ok(named(docs, 'Service').includes('authgate-authz'), 'the Service exists');
  for (const path of ['/authz/auth-request', '/authz/forward-auth', '/authz/ext-authz']) {
    t.ok(text.includes(`http://authgate-authz.authgate.svc.cluster.local:9091${path}`), `${path} on the authz Service`);
  }
  t.ok(text.includes('authgate-authz.authgate.svc.cluster.local:9092'), 'the gRPC port');
  t.match(text, /trustedProxies \(10\.42\.0\.0\/16\)/, 'who it answers');
  t.match(text, /\/auth\/, \/console\/ and \/\.well-known\/[^]*public\s+Service http:\/\/authgate\.authgate\.svc\.cluster\.local\b/, 'the gateway\'s own paths go to the public Service');
  t.notMatch(text, /routes check/, 'no routes file: no check Job mentioned');

  // The URLs are the gateway's: each answers a check of GET /accounts without a credential with 401.
  const authzPort = await freePort();
  const gw = await startGatewayProcess({ NODE_ENV: 'development', AUTHGATE_AUTHZ_PORT: String(authzPort), AUTHGATE_AUTHZ_HOST: '127.0.0.1' });
  t.teardown(() => {
    gw.child.kill('SIGTERM');
  });
  const base = `http://127.0.0.1:${authzPort}`;
  const headers = { 'user-agent': 'authgate-tests/1.0' };
  const askAuthRequest = await fetch(`${base}/authz/auth-request`, { headers: { ...headers, 'x-original-uri': '/accounts', 'x-original-method': 'GET' } });
  const askForwardAuth = await fetch(`${base}/authz/forward-auth`, { headers: { ...headers, 'x-forwarded-uri': '/accounts', 'x-forwarded-method': 'GET' } });
  const askExtAuthz = await fetch(`${base}/authz/ext-authz/accounts`, { headers });
  t.same([askAuthRequest.status, askForwardAuth.status, askExtAuthz.status], [401, 401, 401], 'each endpoint decides: 401 without a credential');
});

t.test('a routes file: NOTES say where it lives and name the routes-check Job Helm runs', async (t) => {
  for (const [form, values, where] of [
    ['routes.file', { routes: { file: ROUTES_FILE } }, 'ConfigMap authgate-routes, from routes.file'],
    ['routes.fileText', { routes: { fileText: stringify(ROUTES_FILE) } }, 'ConfigMap authgate-routes, from routes.fileText'],
    ['routes.existingConfigMap', { routes: { existingConfigMap: 'team-routes', existingConfigMapKey: 'gateway.yaml' } }, 'ConfigMap team-routes, key gateway.yaml'],
  ] as const) {
    const text = await notes(values);
    const docs = await manifests(values);
    t.ok(text.includes(where), `${form}: ${where}`);
    t.ok(named(docs, 'Job').includes('authgate-routes-check'), `${form}: the Job is rendered`);
    t.ok(text.includes('kubectl -n authgate logs job/authgate-routes-check'), `${form}: NOTES name it and how to read its log`);
    t.match(text, /routes\.file's|the routes file's/, `${form}: step 4 points at the routes file, not the built-in table`);
    if (form === 'routes.existingConfigMap') t.match(text, /no Job checks it/, 'an edit of the team\'s ConfigMap is not checked by Helm: said');
  }
  const unchecked = await notes({ routes: { file: ROUTES_FILE, check: false } });
  t.notMatch(unchecked, /routes-check/, 'routes.check=false: no Job named');
});
