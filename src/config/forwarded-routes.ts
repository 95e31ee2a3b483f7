/**
 * The routes forwarded to the upstream, as data. Nothing else reaches the upstream: any path
 * not matched here is a 404 from the gateway itself.
 */
import type { Scope } from '../authz/scopes.js';

export type CredentialRequirement = 'none' | 'any' | 'login-token';

export type HttpMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';

export type ForwardedRoute = Readonly<{
  /** The exact path; with `subtree`, also every path below it. */
  path: string;
  subtree: boolean;
  /**
   * Each method forwarded, with the scope a credential needs for it: a method cannot be added
   * without one. HEAD goes with GET (fastify answers HEAD from the GET route) and needs its scope.
   */
  methods: Readonly<Partial<Record<Exclude<HttpMethod, 'HEAD'>, Scope>>>;
  auth: Exclude<CredentialRequirement, 'none'>;
}>;

/** Reads for GET (and HEAD), writes for every other method, as the interface names them. */
const readWrite = (read: Scope, write: Scope) => ({ GET: read, POST: write, PUT: write, PATCH: write, DELETE: write, OPTIONS: write }) as const;

export const forwardedRoutes: readonly ForwardedRoute[] = [
  { path: '/accounts', subtree: true, methods: readWrite('accounts:read', 'accounts:write'), auth: 'any' },
  { path: '/organization/me', subtree: false, methods: { GET: 'organization:read' }, auth: 'any' },
];
