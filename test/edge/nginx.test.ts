/**
 * Real nginx (Debian's nginx-light, auth_request) configured by deploy/edge/nginx.conf, in front
 * of a real upstream, asking authgate's authz listener: test/edge/proxy-contract.ts. nginx keeps
 * 401 (with WWW-Authenticate) and 403 with bodies of its own, and the snippet maps the rest back.
 */
import t from 'tap';
import { renderNginxSnippet } from '../helpers/edge-snippets.js';
import { findNginx, startNginx } from '../helpers/nginx-process.js';
import { proxyContract } from './proxy-contract.js';

const binary = findNginx();
if (binary === undefined) {
  t.plan(0, 'no nginx with auth_request on this machine (Debian: apt-get install nginx-light)');
} else {
  proxyContract(t, {
    name: 'nginx',
    passesProblemBody: false,
    dropsIdentityFamilies: false,
    keepsWwwAuthenticateOn403: false,
    async start(addresses) {
      const nginx = await startNginx(binary, addresses.listenPort, renderNginxSnippet(addresses));
      return { url: nginx.url, diagnostics: nginx.errorLog, close: nginx.close };
    },
  });
}
