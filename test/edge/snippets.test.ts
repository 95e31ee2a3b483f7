/**
 * The shipped edge-proxy configurations (deploy/edge/): nginx's and Caddy's accepted by the real
 * binaries as the tests render them (the behaviour is tested in nginx.test.ts and caddy.test.ts);
 * the Kubernetes ones, for proxies that cannot run here, checked against the authz contract:
 * the endpoint each protocol must call, the identity headers each must copy, the listener's ports.
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { EDGE_DIR, readSnippet, renderCaddySnippet, renderNginxSnippet } from '../helpers/edge-snippets.js';
import { adaptCaddyfile, findCaddy } from '../helpers/caddy-process.js';
import { checkNginxConfig, findNginx } from '../helpers/nginx-process.js';
import { AUTHZ_KEEP_ALIVE_TIMEOUT_MS } from '../../src/edge-authz/http-server.js';

const IDENTITY_HEADERS = ['x-organization-id', 'x-organization-scopes', 'x-authgate-identity'];
const AUTHZ_HOST = 'authgate-authz.authgate.svc.cluster.local';
const addresses = { listenPort: 18080, authzPort: 19091, appPort: 18081, publicPort: 18082 };

type Doc = Record<string, any>;
const docs = (name: string): Doc[] => parseAllDocuments(readSnippet(name)).map((doc) => {
  if (doc.errors.length > 0) throw new Error(`${name}: ${doc.errors.map((e) => e.message).join('; ')}`);
  return doc.toJS() as Doc;
});
const lower = (names: string[]) => names.map((name) => name.toLowerCase());

const nginx = findNginx();
t.test('nginx.conf passes nginx -t as rendered', { skip: nginx === undefined ? 'no nginx with auth_request' : false }, async (t) => {
  const rendered = renderNginxSnippet(addresses);
  t.equal(checkNginxConfig(nginx!, rendered), undefined);
  t.match(rendered, 'proxy_pass http://authgate_authz/authz/auth-request;');
  t.match(rendered, /location ~ \^\/\(auth\|console\|\\\.well-known\)\(\/\|\$\) \{\s+proxy_pass http:\/\/authgate_public;/, 'the own paths to the public port, without auth_request');
  for (const header of IDENTITY_HEADERS) t.match(rendered.toLowerCase(), `proxy_set_header ${header} $`, `sets ${header} from the check`);
});

const caddy = findCaddy();
t.test('Caddyfile adapts as rendered', { skip: caddy === undefined ? 'no caddy' : false }, async (t) => {
  const json = JSON.stringify(adaptCaddyfile(caddy!, renderCaddySnippet(addresses)));
  t.match(json, '/authz/forward-auth');
  t.match(json, `127.0.0.1:${addresses.authzPort}`);
});

t.test('Traefik: ForwardAuth to /authz/forward-auth, every identity header replaced', async (t) => {
  const [check, strip] = docs('traefik-middleware.yaml');
  const forwardAuth = check!['spec'].forwardAuth;
  t.equal(forwardAuth.address, `http://${AUTHZ_HOST}:9091/authz/forward-auth`);
  t.equal(forwardAuth.trustForwardHeader, false);
  // Go regexp syntax is RE2; the same pattern in JavaScript (flags moved) is the check here.
  const regex = new RegExp(String(forwardAuth.authResponseHeadersRegex).replace('(?i)', ''), 'i');
  for (const header of [...IDENTITY_HEADERS, 'X-Organization-Anything', 'X-Authgate-Other']) t.ok(regex.test(header), header);
  t.notOk(regex.test('X-Request-Id'));
  t.same(strip!['spec'].headers.customRequestHeaders, { Authorization: '' });
});

t.test('ingress-nginx: auth-url to /authz/auth-request, the identity headers, keep-alive', async (t) => {
  const [ingress] = docs('ingress-nginx.yaml');
  const annotations = ingress!['metadata'].annotations as Record<string, string>;
  t.equal(annotations['nginx.ingress.kubernetes.io/auth-url'], `http://${AUTHZ_HOST}:9091/authz/auth-request`);
  t.same(lower(annotations['nginx.ingress.kubernetes.io/auth-response-headers']!.split(',')), IDENTITY_HEADERS);
  t.ok(Number(annotations['nginx.ingress.kubernetes.io/auth-keepalive']) > 0);
  // Below authgate's keep-alive timeout (125 s): the pool closes first, never authgate under it.
  t.ok(Number(annotations['nginx.ingress.kubernetes.io/auth-keepalive-timeout']) < AUTHZ_KEEP_ALIVE_TIMEOUT_MS / 1000);
  // The check is a GET and ingress-nginx writes X-Original-URI itself (nginx.tmpl: only with auth-method).
  t.equal(annotations['nginx.ingress.kubernetes.io/auth-method'], 'GET');
});

/** The paths of a manifest's route for the gateway's own paths, which must take none of the check. */
const OWN_PATHS = ['/auth', '/console', '/.well-known'];

t.test('each Kubernetes configuration routes the gateway\'s own paths to its public Service, unchecked', async (t) => {
  const [, own] = docs('ingress-nginx.yaml');
  t.equal(own!['kind'], 'Ingress');
  t.notOk(Object.keys(own!['metadata'].annotations ?? {}).some((name) => name.includes('auth-url')), 'ingress-nginx: no auth-url on the own paths');
  const paths = own!['spec'].rules[0].http.paths as Doc[];
  t.same(paths.map((p) => p['path']), OWN_PATHS);
  for (const p of paths) t.same(p['backend'].service, { name: 'authgate', port: { number: 80 } });

  const [, , route] = docs('traefik-middleware.yaml');
  t.equal(route!['kind'], 'IngressRoute');
  const rule = route!['spec'].routes[0];
  for (const path of OWN_PATHS) t.match(rule.match, `PathPrefix(\`${path}\`)`, `Traefik: ${path}`);
  t.notOk('middlewares' in rule, 'Traefik: no ForwardAuth on the own paths');
  t.same(rule.services, [{ name: 'authgate', port: 80 }]);

  const [, , httpRoute] = docs('envoy-gateway.yaml');
  t.equal(httpRoute!['kind'], 'HTTPRoute');
  t.same(httpRoute!['spec'].rules[0].matches.map((m: Doc) => m['path'].value), OWN_PATHS);
  t.same(httpRoute!['spec'].rules[0].backendRefs, [{ name: 'authgate', port: 80 }]);
  t.not(httpRoute!['metadata'].name, docs('envoy-gateway.yaml')[0]!['spec'].targetRefs[0].name, 'Envoy Gateway: not the route the SecurityPolicy targets');
});

t.test('Envoy and Istio send the check what authgate decides on: the override headers and the identity headers', async (t) => {
  const overrides = ['x-http-method-override', 'x-http-method', 'x-method-override'];
  const [policy] = docs('envoy-gateway.yaml');
  for (const name of [...overrides, ...IDENTITY_HEADERS]) t.ok(policy!['spec'].extAuth.headersToExtAuth.includes(name), `Envoy Gateway: ${name}`);
  const [mesh] = docs('istio.yaml');
  const included = (mesh!['meshConfig'].extensionProviders as Doc[])[0]!['envoyExtAuthzHttp'].includeRequestHeadersInCheck as string[];
  for (const name of [...overrides, 'x-organization-*', 'x-authgate-*']) t.ok(included.includes(name), `Istio: ${name}`);
});

t.test('Istio: HTTP provider with the /authz/ext-authz prefix, gRPC provider, CUSTOM policy', async (t) => {
  const [mesh, policy] = docs('istio.yaml');
  const [http, grpc] = mesh!['meshConfig'].extensionProviders as Doc[];
  t.equal(http!['envoyExtAuthzHttp'].service, AUTHZ_HOST);
  t.equal(http!['envoyExtAuthzHttp'].port, 9091);
  t.equal(http!['envoyExtAuthzHttp'].pathPrefix, '/authz/ext-authz');
  t.same(http!['envoyExtAuthzHttp'].headersToUpstreamOnAllow, IDENTITY_HEADERS);
  t.ok(http!['envoyExtAuthzHttp'].includeRequestHeadersInCheck.includes('authorization'));
  for (const header of ['www-authenticate', 'retry-after']) t.ok(http!['envoyExtAuthzHttp'].headersToDownstreamOnDeny.includes(header), header);
  t.equal(http!['envoyExtAuthzHttp'].statusOnError, '503');
  t.equal(grpc!['envoyExtAuthzGrpc'].port, 9092);
  t.equal(policy!['spec'].action, 'CUSTOM');
  t.equal(policy!['spec'].provider.name, http!['name']);
});

t.test('Envoy Gateway: SecurityPolicy extAuth.http to /authz/ext-authz, with its ReferenceGrant', async (t) => {
  const [policy, grant] = docs('envoy-gateway.yaml');
  const extAuth = policy!['spec'].extAuth;
  t.same(extAuth.http.backendRefs, [{ name: 'authgate-authz', namespace: 'authgate', port: 9091 }]);
  t.equal(extAuth.http.path, '/authz/ext-authz');
  t.same(extAuth.http.headersToBackend, IDENTITY_HEADERS);
  t.ok(extAuth.headersToExtAuth.includes('authorization'));
  t.equal(extAuth.failOpen, false);
  t.equal(grant!['kind'], 'ReferenceGrant');
  t.equal(grant!['spec'].to[0].name, 'authgate-authz');
  t.equal(grant!['spec'].from[0].namespace, policy!['metadata'].namespace);
});

t.test('docs/operations-proxies.md shows every configuration as shipped', async (t) => {
  const operations = readFileSync(join(EDGE_DIR, '..', '..', 'docs', 'operations-proxies.md'), 'utf8');
  for (const file of ['nginx.conf', 'Caddyfile', 'traefik-middleware.yaml', 'ingress-nginx.yaml', 'istio.yaml', 'envoy-gateway.yaml']) {
    t.ok(operations.includes(readSnippet(file).trimEnd()), `${file} verbatim in docs/operations-proxies.md`);
  }
});
