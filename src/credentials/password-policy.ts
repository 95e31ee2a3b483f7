/**
 * The password policy (issue 31; NIST SP 800-63B-4 §3.1.1.2): the one check every password that
 * is *set* goes through (organization creation today; change and reset next). Login never
 * applies it: an organization keeps logging in with the password it has.
 *
 * - Length in Unicode code points (NIST: each code point is one character), never UTF-16 units:
 *   at least AUTHGATE_PASSWORD_MIN_LENGTH (default 15, NIST's figure for a password used alone;
 *   never under 8, NIST's floor), at most 128 (bounds argon2's input; refused, never truncated).
 * - No composition rules, no expiry (NIST: SHALL NOT).
 * - Refused when on the blocklist (case-insensitive, whole password) or when it contains the
 *   organization's name or its e-mail's local part (case-insensitive).
 * - Each refusal is its own problem code with a human `detail` (NIST: SHALL say why, and guide).
 *   No answer, log line or audit entry ever carries the password, nor the context word matched.
 *
 * The blocklist: `passwords-common` of @zxcvbn-ts/language-common (MIT, compatible with
 * Apache-2.0; maintained with zxcvbn-ts): 49,233 common and breached passwords ranked from
 * Xato's 10-million-password corpus, all lower case. Only its entries of at least 8 code points
 * are kept (17,950): a shorter one is refused as too short before the list is consulted, whatever
 * the configured minimum. It is one Set, built once per process on first use; createPasswordPolicy
 * uses it, and buildGateway makes the policy at start, so the first sign-up does not pay and a
 * missing list stops the start. Each check is one lower-casing and one hash lookup, O(1) in the
 * list's size.
 * Measured on the project's 2-core machine (Node 24.21, five cold processes, gc before and after):
 * building it costs 90-100 ms of CPU once per process (read 0.5 MB, JSON.parse of 49,233 strings,
 * filter, Set; wall time was 210-340 ms with the machine's load average at 14, so the CPU time
 * is the figure that holds), keeps 1.14-1.16 MB of heap (the Set and its 17,950 strings), and
 * leaves RSS ~13 MB higher (the parse's transient strings and array; V8 keeps the pages); one check
 * (length, lower-casing, a Set lookup, two substring searches) takes ~1 µs.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Problem } from '../problems.js';

/** NIST SP 800-63B-4's floor (a password used with a second factor); the setting may not go under it. */
export const PASSWORD_MIN_LENGTH_FLOOR = 8;
/** NIST SP 800-63B-4's minimum for a password used alone; AUTHGATE_PASSWORD_MIN_LENGTH's default. */
export const PASSWORD_MIN_LENGTH_DEFAULT = 15;
/** The most a password may have: NIST asks for at least 64; 128 bounds argon2's input (OWASP ASVS 4 2.1.2). */
export const PASSWORD_MAX_LENGTH = 128;
/**
 * Context words shorter than this are not looked for. A 2- or 3-letter name or local part
 * ("jo", "ops", "acme"'s "ac") turns up by chance inside ordinary words ("enjoy", "tops"), so it
 * would refuse good passphrases while keeping out almost no guess; from 4 code points on, a match
 * by chance in a 15-character passphrase is rare and a match on purpose is what attackers try first.
 */
export const CONTEXT_WORD_MIN_LENGTH = 4;

/** Why a password was refused; each is one problem (src/problems.ts). */
export type PasswordRefusal = 'passwordTooShort' | 'passwordTooLong' | 'passwordBlocklisted' | 'passwordContainsContext';

/** What the password must not contain: the organization it is for. */
export type PasswordContext = Readonly<{ name: string; email: string }>;

export type PasswordPolicy = Readonly<{
  minLength: number;
  maxLength: number;
  /** The first reason it is refused (length, then blocklist, then context words), or undefined. */
  check(password: string, context: PasswordContext): PasswordRefusal | undefined;
  /** Throws the refusal's Problem (400), with a detail that never repeats the password. */
  enforce(password: string, context: PasswordContext): void;
}>;

/** Code points, counted without building an array; stops once past `limit` (the answer is then `limit + 1`). */
export function codePointLength(text: string, limit = Number.MAX_SAFE_INTEGER): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    // A high surrogate followed by a low one is one code point; a lone surrogate counts as one.
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    if (++count > limit) return count;
  }
  return count;
}

let blocklist: ReadonlySet<string> | undefined;

/** The blocklist's Set, built on the first call and kept for the process (every gateway in it shares it). */
export function loadPasswordBlocklist(): ReadonlySet<string> {
  if (blocklist !== undefined) return blocklist;
  // The package's plain JSON array (its `src/`, shipped in the package): reading it directly
  // avoids the package's index, which would also decompress a diceware list and keyboard graphs.
  const file = createRequire(import.meta.url).resolve('@zxcvbn-ts/language-common/src/passwords.json');
  const entries: unknown = JSON.parse(readFileSync(file, 'utf8'));
  if (!Array.isArray(entries) || entries.length < 10_000) throw new Error(`the password blocklist (${file}) is not the list of common passwords it should be`);
  const set = new Set<string>();
  for (const entry of entries) {
    if (typeof entry === 'string' && codePointLength(entry, PASSWORD_MIN_LENGTH_FLOOR) >= PASSWORD_MIN_LENGTH_FLOOR) set.add(entry.toLowerCase());
  }
  blocklist = set;
  return set;
}

/** The local part of an e-mail (before its last `@`), as typed. */
function localPart(email: string): string {
  const at = email.trim().lastIndexOf('@');
  return at === -1 ? email.trim() : email.trim().slice(0, at);
}

const DETAILS: Readonly<Record<PasswordRefusal, (minLength: number) => string>> = {
  passwordTooShort: (min) =>
    `The password must be at least ${min} characters long (counted in Unicode code points). A passphrase of a few unrelated words is long enough and easy to remember.`,
  passwordTooLong: () => `The password must be at most ${PASSWORD_MAX_LENGTH} characters long (counted in Unicode code points); it is never cut short.`,
  passwordBlocklisted: () => 'The password is on a list of common and breached passwords (compared case-insensitively); choose one nobody else is likely to use.',
  passwordContainsContext: () => "The password contains the organization's name or its e-mail's local part (compared case-insensitively); choose one without them.",
};

const REASONS: Readonly<Record<PasswordRefusal, string>> = {
  passwordTooShort: 'password_too_short',
  passwordTooLong: 'password_too_long',
  passwordBlocklisted: 'password_blocklisted',
  passwordContainsContext: 'password_contains_context',
};

/** A policy for this minimum (AUTHGATE_PASSWORD_MIN_LENGTH, checked by config/load.ts). */
export function createPasswordPolicy(options: { minLength: number }): PasswordPolicy {
  const { minLength } = options;
  if (!Number.isInteger(minLength) || minLength < PASSWORD_MIN_LENGTH_FLOOR || minLength > PASSWORD_MAX_LENGTH) {
    throw new RangeError(`password minimum length must be an integer from ${PASSWORD_MIN_LENGTH_FLOOR} to ${PASSWORD_MAX_LENGTH}`);
  }
  const listed = loadPasswordBlocklist();

  const check = (password: string, context: PasswordContext): PasswordRefusal | undefined => {
    const length = codePointLength(password, PASSWORD_MAX_LENGTH);
    if (length < minLength) return 'passwordTooShort';
    if (length > PASSWORD_MAX_LENGTH) return 'passwordTooLong';
    const lower = password.toLowerCase();
    if (listed.has(lower)) return 'passwordBlocklisted';
    for (const word of [context.name.trim(), localPart(context.email)]) {
      if (codePointLength(word, CONTEXT_WORD_MIN_LENGTH) >= CONTEXT_WORD_MIN_LENGTH && lower.includes(word.toLowerCase())) return 'passwordContainsContext';
    }
    return undefined;
  };

  return {
    minLength,
    maxLength: PASSWORD_MAX_LENGTH,
    check,
    enforce(password, context) {
      const refusal = check(password, context);
      // The reason (a fixed name) is all a log line could see; never the password.
      if (refusal !== undefined) throw new Problem(refusal, DETAILS[refusal](minLength), REASONS[refusal]);
    },
  };
}
