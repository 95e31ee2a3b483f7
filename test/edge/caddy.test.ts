/**
 * Real Caddy (Debian's caddy 2.6, forward_auth) configured by deploy/edge/Caddyfile, in front of
 * a real upstream, asking authgate's authz listener: test/edge/proxy-contract.ts. Caddy passes a
 * refusal to the client as authgate answered it, problem body included.
 */
import t from 'tap';
import { renderCaddySnippet } from '../helpers/edge-snippets.js';
import { findCaddy, startCaddy } from '../helpers/caddy-process.js';
import { proxyContract } from './proxy-contract.js';

const binary = findCaddy();
if (binary === undefined) {
  t.plan(0, 'no caddy on this machine (Debian: apt-get install caddy)');
} else {
  proxyContract(t, {
    name: 'Caddy',
    passesProblemBody: true,
    dropsIdentityFamilies: true,
    keepsWwwAuthenticateOn403: true,
    async start(addresses) {
      const caddy = await startCaddy(binary, addresses.listenPort, renderCaddySnippet(addresses));
      return { url: caddy.url, diagnostics: caddy.output, close: caddy.close };
    },
  });
}
