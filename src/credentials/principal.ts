/**
 * Who a request acts for, produced once by credential resolution and read by every later stage
 * (authorization, identity injection, the log line). The principal is always an organization.
 */
import type { ScopeGrant } from '../authz/scopes.js';

export type { CredentialKind } from './decisions.js';
import type { CredentialKind } from './decisions.js';

export type Principal = Readonly<{
  orgId: string;
  via: CredentialKind;
  /** The API key's id, the login session's id, or `<issuer>:<sub>` for a provider token: never a secret. */
  credentialId: string;
  /** What it may do (authz/scopes.ts): every scope for a login token, the key's own for an API key. */
  scopes: ScopeGrant;
  /**
   * Epoch ms from which the credential is refused, for an API key that expires (absent
   * otherwise). The resolver compares it with its clock on every lookup, cache hits too.
   */
  expiresAt?: number;
  /** A provider token's (via issuer_token, issue 49): the routes file's name of its issuer and the token's `sub`. */
  issuer?: string;
  subject?: string;
}>;
