/**
 * The gateway's own API on the public port (/auth/…): every route module it is made of and what
 * each is handed, in one place. http/public-server.ts calls registerAuthApi inside step 4's scope
 * (strict JSON bodies, no-store, the members' role guard), so adding a route module is a line here
 * and a field of AuthApiDeps if it needs a service the others do not; the pipeline around it is
 * public-server.ts's.
 */
import type { FastifyInstance } from 'fastify';
import type { AuditTrail } from '../audit/trail.js';
import type { LeakReportThrottle } from '../guards/leak-report-throttle.js';
import type { LoginThrottle } from '../guards/login-throttle.js';
import type { ResetThrottle } from '../guards/reset-throttle.js';
import type { RoleGuardStore } from '../members/role-guard.js';
import type { PlanLookup } from '../plans/organization-plans.js';
import type { RouteTableSource } from '../route-table/types.js';
import type { ApiKeyService } from '../services/api-keys.js';
import type { MemberService } from '../services/members.js';
import type { MfaService } from '../services/mfa.js';
import type { ProfileService } from '../services/organization-profiles.js';
import type { PasskeyService } from '../services/passkeys.js';
import type { PasswordChangeService } from '../services/password-changes.js';
import type { SessionService } from '../services/sessions.js';
import type { UsageReports } from '../services/usage-report.js';
import type { AuditStore } from '../store/audit.js';
import type { Organization } from '../store/store.js';
import { apiKeyRoutes } from './api-keys.js';
import { auditRoutes } from './audit.js';
import { authRoutes } from './auth.js';
import { leakedKeyRoutes } from './leaked-keys.js';
import { memberRoutes } from './members.js';
import { mfaRoutes } from './mfa.js';
import { organizationRoutes } from './organization.js';
import { passkeyRoutes } from './passkeys.js';
import { passwordRoutes } from './passwords.js';
import { scopeRoutes } from './scopes.js';
import { sessionRoutes } from './sessions.js';
import { usageRoutes } from './usage.js';

export type AuthApiDeps = Readonly<{
  /** The live route table (GET /auth/scopes names its scopes). */
  routes: RouteTableSource;
  sessions: SessionService;
  throttle: LoginThrottle;
  apiKeys: ApiKeyService;
  /** The leak-report limit per client address (POST /auth/api-key/leaked). */
  leakReports: LeakReportThrottle;
  /** Changing and resetting passwords (POST /auth/password, /auth/password/reset). */
  passwords: PasswordChangeService;
  /** Changing the organization's name and e-mail (GET and PATCH /auth/organization). */
  profiles: ProfileService;
  /** The second factor (issue 32): the login's second step and TOTP management; enrolment off without a key. */
  mfa: { service: MfaService; enrolment: boolean; findOrganization: (orgId: string) => Promise<Organization | undefined>; passkeys: PasskeyService };
  /** The reset-attempt limit per client address (POST /auth/password/reset). */
  passwordResets: ResetThrottle;
  /** Security events (audit/trail.ts); the organization reads its own with GET /auth/audit. */
  audit: AuditTrail;
  auditLog: Pick<AuditStore, 'readAuditEvents'>;
  /** Members and their roles (issue 50): the routes, and the store the role guard reads. */
  members: Readonly<{ service: MemberService; store: RoleGuardStore }>;
  /** GET /auth/usage (services/usage-report.ts). */
  usage: UsageReports;
  /** The organizations' plans (plans/organization-plans.ts): GET /auth/scopes says what a credential's plan lets it hold. */
  plans: PlanLookup;
}>;

/** Registers every /auth route module on `auth`, the public port's scope of strict JSON bodies. */
export async function registerAuthApi(auth: FastifyInstance, deps: AuthApiDeps): Promise<void> {
  await auth.register(authRoutes, { sessions: deps.sessions, throttle: deps.throttle, audit: deps.audit, mfa: deps.mfa.service });
  await auth.register(mfaRoutes, { mfa: deps.mfa.service, passwords: deps.passwords, findOrganization: deps.mfa.findOrganization, throttle: deps.throttle, audit: deps.audit, enrolment: deps.mfa.enrolment, passkeysOffered: deps.mfa.passkeys.offered });
  await auth.register(passkeyRoutes, { passkeys: deps.mfa.passkeys, mfa: deps.mfa.service, passwords: deps.passwords, findOrganization: deps.mfa.findOrganization, throttle: deps.throttle, audit: deps.audit });
  await auth.register(passwordRoutes, { passwords: deps.passwords, throttle: deps.throttle, resets: deps.passwordResets, audit: deps.audit });
  await auth.register(organizationRoutes, { profiles: deps.profiles, passwords: deps.passwords, throttle: deps.throttle, audit: deps.audit });
  await auth.register(apiKeyRoutes, { apiKeys: deps.apiKeys, audit: deps.audit, keyCreators: deps.members.store });
  await auth.register(sessionRoutes, { sessions: deps.sessions, audit: deps.audit });
  await auth.register(leakedKeyRoutes, { apiKeys: deps.apiKeys, throttle: deps.leakReports, audit: deps.audit });
  await auth.register(auditRoutes, { auditLog: deps.auditLog });
  await auth.register(scopeRoutes, { routes: deps.routes, plans: deps.plans });
  await auth.register(usageRoutes, { usage: deps.usage });
  await auth.register(memberRoutes, { members: deps.members.service, sessions: deps.sessions, audit: deps.audit });
}
