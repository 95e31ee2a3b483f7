/**
 * Routes files for the reload tests, written to disk as an operator would: today's two routes
 * spelled out (the built-in table), and edits of it.
 */
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const READ_WRITE = (read: string, write: string) => `{ GET: ${read}, POST: ${write}, PUT: ${write}, PATCH: ${write}, DELETE: ${write}, OPTIONS: ${write} }`;

export type RouteLines = { id: string; path: string; match: 'exact' | 'subtree'; methods: string; extra?: string };

export const ACCOUNTS: RouteLines = { id: 'accounts', path: '/accounts', match: 'subtree', methods: READ_WRITE('accounts:read', 'accounts:write') };
export const ORGANIZATION_ME: RouteLines = { id: 'organization-me', path: '/organization/me', match: 'exact', methods: '{ GET: organization:read }' };
export const REPORTS: RouteLines = { id: 'reports', path: '/v1/reports', match: 'subtree', methods: '{ GET: reports:read }' };

/** A version 1 file with these routes, and every scope they name declared. */
export function routesYaml(routes: readonly RouteLines[], comment = ''): string {
  const scopes = new Set<string>();
  for (const route of routes) for (const m of route.methods.matchAll(/: ([a-z_-]+:[a-z_-]+)/g)) scopes.add(m[1]!);
  return [
    `# authgate routes${comment === '' ? '' : ` (${comment})`}`,
    'version: 1',
    ...(scopes.size === 0 ? [] : ['scopes:', ...[...scopes].map((s) => `  ${s}: "${s}"`)]),
    'routes:',
    ...routes.flatMap((r) => [`  - id: ${r.id}`, `    path: ${r.path}`, `    match: ${r.match}`, `    methods: ${r.methods}`, ...(r.extra === undefined ? [] : [`    ${r.extra}`])]),
    '',
  ].join('\n');
}

/** Today's table as a file. */
export const BUILTIN_YAML = routesYaml([ACCOUNTS, ORGANIZATION_ME]);

/**
 * A Kubernetes ConfigMap volume as the kubelet's atomic writer lays it out and updates it:
 * `routes.yaml -> ..data/routes.yaml`, `..data -> ..<timestamp>`; an update writes a new
 * timestamped directory, renames a `..data_tmp` symlink over `..data`, removes the old directory.
 */
export function configMapVolume(dir: string, name = 'routes.yaml') {
  let generation = 0;
  let current: string | undefined;
  const publish = (content: string) => {
    const stamp = `..2026_11_26_00_41_${String(generation++).padStart(2, '0')}.${String(process.hrtime.bigint() % 1_000_000_000n).padStart(9, '0')}`;
    mkdirSync(join(dir, stamp));
    writeFileSync(join(dir, stamp, name), content);
    symlinkSync(stamp, join(dir, '..data_tmp'));
    renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
    if (current === undefined) symlinkSync(join('..data', name), join(dir, name));
    else rmSync(join(dir, current), { recursive: true });
    current = stamp;
  };
  return { publish, path: join(dir, name) };
}
