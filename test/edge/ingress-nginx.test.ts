/**
 * Issue 45, "the authorization port believes what the proxy did not write", through a real nginx:
 * - configured as ingress-nginx's auth location, built from ingress-nginx's own template
 *   (rootfs/etc/nginx/template/nginx.tmpl, the `location = {{ $authPath }}` block and the
 *   `auth_request` + `auth-response-headers` lines of the protected location): X-Original-URL from
 *   `$scheme://$http_host$request_uri`, X-Original-Method, X-Real-IP, X-Forwarded-For, and with
 *   `auth-method` also `proxy_method` and X-Original-URI; `proxy_pass_request_headers on`, so the
 *   client's own headers go to the check too. Once without `auth-method` (ingress-nginx's default,
 *   what the shipped manifest was) and once as deploy/edge/ingress-nginx.yaml now ships it;
 * - configured as the documented snippet (deploy/edge/nginx.conf).
 * A client sends its own X-Original-URI or X-Original-URL, crafted Hosts, identity headers and
 * method overrides over a raw socket; what reached the upstream is the assertion (nothing, for a
 * refusal). The route table has the common shape: a public root subtree and a credentialed
 * /admin below it.
 */
import t, { type Test } from 'tap';
import type { RoutesFile } from '../../src/route-table/types.js';
import { listenAuthz } from '../helpers/authz.js';
import { readSnippet, renderNginxSnippet } from '../helpers/edge-snippets.js';
import { send, startGateway, UA } from '../helpers/gateway.js';
import { findNginx, startNginx } from '../helpers/nginx-process.js';
import { rawRequest } from '../helpers/raw-http.js';
import { freePort } from '../helpers/redis.js';
import { tableOf } from '../helpers/routes.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

const ROUTES: RoutesFile = {
  version: 1,
  scopes: { 'admin:read': 'Read the admin area', 'admin:write': 'Change the admin area' },
  routes: [
    { id: 'admin', path: '/admin', match: 'subtree', methods: { GET: 'admin:read', DELETE: 'admin:write' } },
    { id: 'root', path: '/', match: 'subtree', credentials: 'none', methods: { GET: 'public' } },
  ],
};

/** ingress-nginx's rendering of one Ingress with auth-url and auth-response-headers (nginx.tmpl). */
function ingressNginxConfig(ports: { listen: number; authz: number; app: number }, authMethod: string | undefined): string {
  const authMethodLines = authMethod === undefined ? '' : `
            proxy_method                ${authMethod};
            proxy_set_header            X-Original-URI          $request_uri;
            proxy_set_header            X-Scheme                $scheme;`;
  return `
    underscores_in_headers off;
    ignore_invalid_headers on;
    upstream authgate_authz {
        server 127.0.0.1:${ports.authz};
        keepalive 32;
    }
    upstream upstream_balancer {
        server 127.0.0.1:${ports.app};
    }
    server {
        listen 127.0.0.1:${ports.listen};
        location = /_external-auth-Lw-Prefix {
            internal;
            proxy_intercept_errors      off;
            proxy_pass_request_body     off;
            proxy_set_header            Content-Length          "";
            proxy_set_header            X-Forwarded-Proto       "";
            proxy_set_header            X-Request-ID            $request_id;${authMethodLines}
            proxy_set_header            Host                    authgate-authz.authgate.svc.cluster.local;
            proxy_set_header            X-Original-URL          $scheme://$http_host$request_uri;
            proxy_set_header            X-Original-Method       $request_method;
            proxy_set_header            X-Sent-From             "nginx-ingress-controller";
            proxy_set_header            X-Real-IP               $remote_addr;
            proxy_set_header            X-Forwarded-For         $remote_addr;
            proxy_set_header            X-Auth-Request-Redirect $request_uri;
            proxy_buffering             off;
            proxy_ssl_server_name       on;
            proxy_pass_request_headers  on;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_pass http://authgate_authz/authz/auth-request;
        }
        location / {
            auth_request        /_external-auth-Lw-Prefix;
            auth_request_set    $auth_cookie $upstream_http_set_cookie;
            add_header          Set-Cookie $auth_cookie;
            auth_request_set $authHeader0 $upstream_http_x_organization_id;
            proxy_set_header 'X-Organization-Id' $authHeader0;
            auth_request_set $authHeader1 $upstream_http_x_organization_scopes;
            proxy_set_header 'X-Organization-Scopes' $authHeader1;
            auth_request_set $authHeader2 $upstream_http_x_authgate_identity;
            proxy_set_header 'X-Authgate-Identity' $authHeader2;
            proxy_set_header X-Request-ID $request_id;
            proxy_set_header X-Original-URI $request_uri;
            proxy_pass_request_headers on;
            proxy_pass http://upstream_balancer;
        }
    }
`;
}

/** The auth-method the shipped manifest sets, if any (test/edge/snippets.test.ts checks the file's shape). */
function shippedAuthMethod(): string | undefined {
  return /nginx\.ingress\.kubernetes\.io\/auth-method:\s*"?([A-Z]+)"?/.exec(readSnippet('ingress-nginx.yaml'))?.[1];
}

const binary = findNginx();

async function setup(t: Test) {
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const gw = await startGateway(t, { env: { AUTHGATE_AUTHZ_PORT: '0' }, upstream, deps: { routes: tableOf(ROUTES, upstream.url) } });
  const authz = await listenAuthz(gw);
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const keyOf = async (scopes: string[]) =>
    (await send(`${gw.publicUrl}/auth/api-key`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ scopes }) })).json().apiKey as string;
  return { gw, upstream, authz, reader: await keyOf(['admin:read']), writer: await keyOf(['admin:read', 'admin:write']) };
}

type Proxied = Awaited<ReturnType<typeof setup>> & { port: number };

/** One request over a raw socket: what the client wrote, byte for byte. */
function raw(port: number, target: string, headers: Array<[string, string]>, host = `127.0.0.1:${port}`, method = 'GET') {
  return rawRequest(port, `${method} ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\nUser-Agent: curl/8.5.0\r\n${headers.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`, 10_000);
}

/** Sends, and returns the status and the upstream requests it caused. */
async function attempt(s: Proxied, target: string, headers: Array<[string, string]>, host?: string) {
  const before = s.upstream.requests.length;
  const res = await raw(s.port, target, headers, host);
  return { status: res.status, reached: s.upstream.requests.slice(before) };
}

function attacks(t: Test, s: Proxied, label: string): void {
  t.test(`${label}: a client's X-Original-URI or X-Original-URL never decides another path`, async (t) => {
    for (const [name, value] of [['X-Original-URI', '/healthz'], ['X-Original-URL', 'http://api.example.com/healthz']] as const) {
      const { status, reached } = await attempt(s, '/admin/users', [[name, value]]);
      t.not(status, 200, `${name}: ${value}: not allowed (${status})`);
      t.same(reached.map((r) => r.url), [], `${name}: nothing reached the upstream`);
    }
  });

  t.test(`${label}: a Host that ends the authority early (\`x#\`, \`:1?\`) never makes /admin read as /`, async (t) => {
    for (const host of ['api.example.com:1?', 'x#', 'x?']) {
      const { status, reached } = await attempt(s, '/admin/users', [], host);
      t.not(status, 200, `Host: ${host}: not allowed (${status})`);
      t.same(reached.map((r) => r.url), [], `Host: ${host}: nothing reached the upstream`);
    }
    // The public root stays public with an ordinary Host.
    const { status, reached } = await attempt(s, '/about', []);
    t.equal(status, 200);
    t.equal(reached[0]?.url, '/about');
  });

  t.test(`${label}: a client's identity-family header is refused, never passed on`, async (t) => {
    for (const [name, value] of [['X-Organization-Role', 'admin'], ['X-Authgate-Foo', 'x'], ['X-Organization-Id', 'org_forged']] as const) {
      for (const [target, credential] of [['/about', undefined], ['/admin/users', s.reader]] as const) {
        const headers: Array<[string, string]> = [[name, value]];
        if (credential !== undefined) headers.push(['Authorization', `Bearer ${credential}`]);
        const { status, reached } = await attempt(s, target, headers);
        // 400; ingress-nginx turns every status of the check but 401 and 403 into 500.
        t.ok(status === 400 || status === 500, `${name} on ${target}: refused (${status})`);
        t.same(reached, [], `${name} on ${target}: nothing reached the upstream`);
      }
    }
  });

  t.test(`${label}: a method override needs the overridden method's scope`, async (t) => {
    for (const name of ['X-HTTP-Method-Override', 'X-HTTP-Method', 'X-Method-Override']) {
      let { status, reached } = await attempt(s, '/admin/users/7', [['Authorization', `Bearer ${s.reader}`], [name, 'DELETE']]);
      t.equal(status, 403, `${name}: DELETE needs admin:write`);
      t.same(reached, [], `${name}: nothing reached the upstream`);
      ({ status, reached } = await attempt(s, '/admin/users/7', [['Authorization', `Bearer ${s.writer}`], [name, 'DELETE']]));
      t.equal(status, 200, `${name}: a key holding both scopes`);
      t.equal(reached[0]?.headers[name.toLowerCase()], 'DELETE');
    }
  });

  t.test(`${label}: an ordinary request is decided as before`, async (t) => {
    const { status, reached } = await attempt(s, '/admin/users?x=1', [['Authorization', `Bearer ${s.reader}`]]);
    t.equal(status, 200);
    t.equal(reached[0]?.url, '/admin/users?x=1');
    t.match(reached[0]?.headers['x-organization-id'], /^org_/);
    t.equal((await attempt(s, '/admin/users', [])).status, 401);
  });
}

if (binary === undefined) {
  t.plan(0, 'no nginx with auth_request on this machine (Debian: apt-get install nginx-light)');
} else {
  const shapes: Array<[string, (ports: { listen: number; authz: number; app: number; public: number }) => string]> = [
    ['ingress-nginx without auth-method (its default)', (p) => ingressNginxConfig(p, undefined)],
    [`ingress-nginx as deploy/edge/ingress-nginx.yaml ships it (auth-method ${shippedAuthMethod() ?? 'unset'})`, (p) => ingressNginxConfig(p, shippedAuthMethod())],
    ['the documented nginx snippet (deploy/edge/nginx.conf)', (p) => renderNginxSnippet({ listenPort: p.listen, authzPort: p.authz, appPort: p.app, publicPort: p.public })],
  ];
  for (const [label, config] of shapes) {
    t.test(label, async (t) => {
      const s = await setup(t);
      const port = await freePort();
      const nginx = await startNginx(binary, port, config({ listen: port, authz: s.authz.port, app: s.upstream.port, public: Number(new URL(s.gw.publicUrl).port) }));
      t.teardown(() => nginx.close());
      t.afterEach(async (t) => {
        if (!t.passing()) t.comment(nginx.errorLog().slice(-4000));
      });
      attacks(t, { ...s, port }, label);
    });
  }
}
