/**
 * The organization's own bounds on its second factor (issue 45), counted in the store so that
 * every replica and every client address share them (CounterStore.countAttempt: check and count
 * in one atomic step, in Redis one script).
 *
 * Failures: every proof of the second factor (a TOTP code, a recovery code, a passkey assertion:
 * at POST /auth/login/mfa, DELETE /auth/mfa/totp and the step-up of an authenticator change) is
 * counted against the organization BEFORE it is judged. At the limit (AUTHGATE_MFA_FAILURE_LIMIT,
 * at most and by default SECOND_FACTOR_FAILURE_LIMIT) counted
 * since the last right proof, the next is refused unjudged (429, 1121), the right code too, until
 * the window (opened by the first failure) ends. A right proof resets the count: what is bounded
 * is consecutive failures, as NIST SP 800-63B asks (at most 100 per account). The per-address and
 * per-e-mail login limits still apply beside it; this is the one an attacker with the password
 * cannot escape by logging in again or by changing address. A proof never judged (the store or a
 * passkey library failing) gives its count back.
 *
 * Challenges: a right password of an organization with a factor issues an mfaToken; at most
 * MFA_TOKENS_PER_WINDOW in a window of the token's lifetime (429, 1122), so at most twice that
 * are alive at once, whatever the login limits let through from known addresses.
 *
 * Both bounds are per second factor (issue 50): the organization's own (its first member's),
 * counted as before members, and each other member's apart, so one member's wrong codes (or a
 * leaked password's challenges) never lock another member out.
 */
import { Problem } from '../problems.js';
import type { CounterStore } from '../store/store.js';
import { otherMemberId } from '../store/members.js';

/** Consecutive wrong second-factor proofs an organization may make (NIST SP 800-63B: at most 100); the setting's default and most. */
export const SECOND_FACTOR_FAILURE_LIMIT = 100;
/** How long the failure count lives from its first failure, unless a right proof resets it. */
export const SECOND_FACTOR_FAILURE_WINDOW_MS = 24 * 3600 * 1000;
/** mfaTokens one organization may be issued per window of an mfaToken's lifetime (5 minutes). */
export const MFA_TOKENS_PER_WINDOW = 20;

/** A proof the bound admitted: say how it ended. */
export type SecondFactorProof = Readonly<{
  /** This proof took the last one the bound admits: a wrong one now locks until the window ends. */
  exhausted: boolean;
  /** Right: the consecutive failures start again. */
  succeeded(): Promise<void>;
  /** Never judged: the count goes back. Best effort; never throws. */
  notJudged(): Promise<void>;
}>;

export type SecondFactorBound = Readonly<{
  /** Counts a proof about to be judged, or throws 1121 (counting nothing) when the bound is spent. */
  proof(orgId: string, memberId?: string): Promise<SecondFactorProof>;
  /** Counts an mfaToken about to be issued, or throws 1122. */
  issue(orgId: string, tokenLifetimeMs: number, memberId?: string): Promise<void>;
}>;

// The braces place each organization's counters together (store/counters.ts LimitedCounter).
// Another member's counters carry its id after the braces (the organization's as before members).
const holderOf = (orgId: string, memberId: string | undefined) => {
  const other = otherMemberId(orgId, memberId);
  return other === undefined ? `{${orgId}}` : `{${orgId}}:${other}`;
};
const failuresOf = (orgId: string, memberId?: string) => `mfa:failures:${holderOf(orgId, memberId)}`;
const tokensOf = (orgId: string, memberId?: string) => `mfa:tokens:${holderOf(orgId, memberId)}`;

export function createSecondFactorBound(counters: CounterStore, limit = SECOND_FACTOR_FAILURE_LIMIT): SecondFactorBound {
  return {
    async proof(orgId, memberId) {
      const name = failuresOf(orgId, memberId);
      const verdict = await counters.countAttempt({ counters: [{ name, limit }], windowMs: SECOND_FACTOR_FAILURE_WINDOW_MS });
      if (!verdict.allowed) throw refused('tooManySecondFactorFailures', verdict.retryInMs, `${limit} wrong second-factor codes in a row: every proof of this second factor is refused`);
      return {
        exhausted: verdict.exhausted,
        succeeded: () => counters.settleAttempt({ reset: [name] }),
        notJudged: async () => {
          try {
            await counters.settleAttempt({ giveBack: [name] });
          } catch {
            // The store is failing too: the proof stays counted, which errs on the safe side.
          }
        },
      };
    },
    async issue(orgId, tokenLifetimeMs, memberId) {
      const verdict = await counters.countAttempt({ counters: [{ name: tokensOf(orgId, memberId), limit: MFA_TOKENS_PER_WINDOW }], windowMs: tokenLifetimeMs });
      if (!verdict.allowed) throw refused('tooManyMfaTokens', verdict.retryInMs, `${MFA_TOKENS_PER_WINDOW} second-factor challenges were issued for this second factor in the last minutes`);
    },
  };
}

function refused(problem: 'tooManySecondFactorFailures' | 'tooManyMfaTokens', retryInMs: number, what: string): Problem {
  const seconds = Math.max(1, Math.ceil(retryInMs / 1000));
  return new Problem(problem, `${what}; try again in ${seconds} seconds.`, problem === 'tooManyMfaTokens' ? 'mfa_tokens_throttled' : 'second_factor_throttled', seconds);
}
