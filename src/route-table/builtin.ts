/**
 * The table used without AUTHGATE_ROUTES_FILE: today's two routes, scopes and answers, so nobody's
 * deployment changes. `docs/routes.md` spells the same table out as a file.
 */
import type { RoutesFile } from './types.js';

const readWrite = (read: string, write: string) => ({ GET: read, POST: write, PUT: write, PATCH: write, DELETE: write, OPTIONS: write });

export const BUILTIN_ROUTES_FILE: RoutesFile = {
  version: 1,
  upstreams: { default: {} },
  scopes: {
    'accounts:read': 'Read accounts',
    'accounts:write': 'Change accounts',
    'organization:read': "Read the organization's identity",
  },
  routes: [
    { id: 'accounts', path: '/accounts', match: 'subtree', credentials: ['login_token', 'api_key'], methods: readWrite('accounts:read', 'accounts:write') },
    { id: 'organization-me', path: '/organization/me', match: 'exact', credentials: ['login_token', 'api_key'], methods: { GET: 'organization:read' } },
  ],
};

