/**
 * The routes forwarded to the upstream, as data. Nothing else reaches the upstream: any path
 * not matched here is a 404 from the gateway itself.
 */
export type CredentialRequirement = 'none' | 'any' | 'login-token';

export type ForwardedRoute = Readonly<{
  /** The exact path; with `subtree`, also every path below it. */
  path: string;
  subtree: boolean;
  methods: readonly HttpMethod[];
  auth: Exclude<CredentialRequirement, 'none'>;
}>;

export type HttpMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';

const ALL_METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

export const forwardedRoutes: readonly ForwardedRoute[] = [
  { path: '/accounts', subtree: true, methods: ALL_METHODS, auth: 'any' },
  { path: '/organization/me', subtree: false, methods: ['GET'], auth: 'any' },
];
