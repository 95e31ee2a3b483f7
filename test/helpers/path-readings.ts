/**
 * Issue 45's attack, shared by the public port's test (e2e/path-readings.test.ts) and the
 * authorization port's through a real nginx (edge/path-readings.test.ts): the common routes file
 * with a public `/` subtree around credentialed routes, and path spellings a common server reads
 * as a credentialed route's path.
 */
import type { RoutesFile } from '../../src/route-table/types.js';
import { parseResponse, rawRequest, requestText } from './raw-http.js';

export const PUBLIC_ROOT_ROUTES: RoutesFile = {
  version: 1,
  scopes: { 'admin:read': 'Administer', 'invoices:read': 'Read invoices', 'accounts:read': 'Read accounts', 'organization:read': "Read the organization's identity", 'api:read': 'Use the API' },
  routes: [
    { id: 'site', path: '/', match: 'subtree', credentials: 'none', methods: { GET: 'public' } },
    { id: 'admin', path: '/admin', match: 'subtree', methods: { GET: 'admin:read' } },
    { id: 'invoices', path: '/v1/invoices', match: 'exact', methods: { GET: 'invoices:read' } },
    { id: 'accounts', path: '/accounts', match: 'subtree', methods: { GET: 'accounts:read' } },
    { id: 'organization-me', path: '/organization/me', match: 'exact', methods: { GET: 'organization:read' } },
    { id: 'api', path: '/api', match: 'subtree', methods: { GET: 'api:read' } },
    { id: 'api-docs', path: '/api/docs', match: 'exact', credentials: 'none', methods: { GET: 'public' }, weakens: 'api' },
  ],
};

/** Refused on every port (400, 1240), with a credential or without: the public root never decides them. */
export const REFUSED_PATHS = [
  '/admin;x/users', // Tomcat, Jetty, Spring: /admin/users
  '/admin;/users',
  '/accounts/..;/organization/me', // the same, then `..`: /organization/me
  '//admin/users', // nginx merge_slashes, Tomcat: /admin/users
  '/admin//users',
  '/api/DOCS', // /api's as sent, the public /api/docs's to a case-insensitive upstream
  '/api/docs/', // the same for a trailing slash
];

/** Spellings decided by the stronger route they spell: 401 without a credential, forwarded as sent with one. */
export const STRONG_SPELLINGS = [
  '/v1/invoices/', // Express (non-strict routing): /v1/invoices
  '/ADMIN/users', // Express, ASP.NET Core: /admin/users
  '/V1/INVOICES',
  '/Admin/users/',
  '/ORGANIZATION/me',
];

export type Answer = { status: number; code: number | undefined; contentType: string };

/** GET `target` as raw bytes on a socket: the status and the problem's code, when the body has one. */
export async function rawGet(port: number, target: string, headers: [string, string][] = []): Promise<Answer> {
  const res = parseResponse((await rawRequest(port, requestText('GET', target, [['User-Agent', 'path-readings-test'], ...headers]))).raw);
  let code: number | undefined;
  try {
    code = (JSON.parse(res.body) as { code?: number }).code;
  } catch {
    code = undefined;
  }
  return { status: res.status, code, contentType: res.headers['content-type'] ?? '' };
}
