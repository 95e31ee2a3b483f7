// Issue 49: the routes file's nesting checks know `issuer:NAME` credentials as they know login_token
// and api_key. A route under a subtree may not take an issuer's tokens the subtree does not take
// unless it says `weakens` (compile.ts); narrowing to fewer issuers is no weakening; a spelling of
// a weakening route in another letter case is refused (path-reading.ts), as for any credential it
// adds; and `routes check` warns of a subtree taking more issuers than a route in it (warnings.ts).
import t from 'tap';
import { compileRoutes } from '../../src/route-table/compile.js';
import { loadRoutesText } from '../../src/route-table/load.js';
import type { RouteCredential, RoutesFile } from '../../src/route-table/types.js';

const context = { defaultUpstreamUrl: 'http://upstream.test', upstreamTimeoutMs: 10_000, defaultAudience: undefined };

function file(outer: readonly RouteCredential[], inner: readonly RouteCredential[], weakens?: string): RoutesFile {
  return {
    version: 1,
    scopes: { 'orders:read': 'Read orders' },
    issuers: {
      corp: { issuer: 'https://corp.example.com/', audiences: ['https://api.example.com'], organization: { claim: 'org_id' } },
      partner: { issuer: 'https://partner.example.net', audiences: ['https://api.example.com'], organization: { fixed: 'org_partner' } },
    },
    routes: [
      { id: 'orders', path: '/orders', match: 'subtree', credentials: outer, methods: { GET: 'orders:read' } },
      { id: 'export', path: '/orders/export', match: 'exact', credentials: inner, methods: { GET: 'orders:read' }, ...(weakens !== undefined && { weakens }) },
    ],
  };
}

const errorsOf = (routes: RoutesFile) => {
  const result = compileRoutes(routes, { ...context, source: undefined });
  return result.ok ? [] : result.errors;
};

t.test('a route under a subtree taking an issuer it does not take needs weakens', async (t) => {
  t.same(errorsOf(file(['api_key', 'issuer:corp'], ['api_key', 'issuer:corp', 'issuer:partner'])), [
    { pointer: '/routes/1', message: 'route export (/orders/export) is under route orders (/orders) and takes credentials it does not (api_key, issuer:corp, issuer:partner against api_key, issuer:corp); if that is meant, add weakens: orders' },
  ]);
  t.match(errorsOf(file(['api_key', 'issuer:corp'], ['api_key', 'issuer:partner'])), [{ pointer: '/routes/1', message: /takes credentials it does not \(api_key, issuer:partner against api_key, issuer:corp\)/ }], 'another issuer in place of the subtree\'s');
  t.match(errorsOf(file(['login_token'], ['issuer:corp'])), [{ pointer: '/routes/1' }], 'an issuer under a subtree that takes none');
  t.same(errorsOf(file(['api_key', 'issuer:corp'], ['api_key', 'issuer:corp', 'issuer:partner'], 'orders')), [], 'said with weakens: accepted');
  t.same(errorsOf(file(['api_key', 'issuer:corp', 'issuer:partner'], ['issuer:corp'])), [], 'fewer issuers: narrowing, no weakening');
  t.same(errorsOf(file(['api_key', 'issuer:corp'], ['api_key', 'issuer:corp'])), [], 'the same');
});

t.test('a weakening route\'s other spellings are refused when it adds an issuer', async (t) => {
  const result = compileRoutes(file(['api_key', 'issuer:corp'], ['api_key', 'issuer:corp', 'issuer:partner'], 'orders'), { ...context, source: undefined });
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  const { table } = result;
  t.equal(table.read('/orders/export').route?.id, 'export');
  // A case-sensitive upstream reads /orders/EXPORT as a path of orders', which takes no partner token.
  t.equal(table.read('/orders/EXPORT').refusal, 'path_variant_weaker');
  t.equal(table.read('/orders/export/').refusal, 'path_variant_weaker');
  const narrowing = compileRoutes(file(['api_key', 'issuer:corp', 'issuer:partner'], ['issuer:corp']), { ...context, source: undefined });
  if (!narrowing.ok) throw new Error(JSON.stringify(narrowing.errors));
  t.equal(narrowing.table.read('/orders/EXPORT').route?.id, 'export', 'a route asking more decides its own spellings');
});

t.test('routes check warns of a subtree that takes an issuer a route in it does not', async (t) => {
  const text = JSON.stringify(file(['api_key', 'issuer:corp', 'issuer:partner'], ['api_key', 'issuer:corp']), null, 1);
  const loaded = loadRoutesText(text, 'routes.json', context);
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors));
  t.equal(loaded.warnings.length, 1);
  t.match(loaded.warnings[0]!.message, /^warning: route export \(exact \/orders\/export\) sits in route orders \(subtree \/orders\), which asks less \(api_key, issuer:corp, issuer:partner against api_key, issuer:corp\): /);
  const weakening = loadRoutesText(JSON.stringify(file(['api_key'], ['api_key', 'issuer:corp'], 'orders'), null, 1), 'routes.json', context);
  if (!weakening.ok) throw new Error(JSON.stringify(weakening.errors));
  t.match(weakening.warnings.map((w) => w.message), [/^warning: route export \(exact \/orders\/export\) sits in route orders \(subtree \/orders\) and asks less: \/orders\/EXPORT, \/orders\/export\/ and other spellings/]);
});
