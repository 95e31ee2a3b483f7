/**
 * The client secret authgate sends to an introspection endpoint (issue 49), read from its file
 * at load and at each reload. It lives in the compiled table, which is logged, serialised and
 * compared in places (registry.ts compares issuers as JSON): so it is held where none of those
 * can reach it. JSON gives a digest (a rotated secret is a changed issuer, and a changed table
 * hash, so a reload applies it), `util.inspect` and String() give a placeholder, and only
 * `reveal()` gives the secret, which introspect.ts calls when it builds its Authorization header.
 */
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';

/** A client secret is a line of text; anything this large is not one. */
const MAX_SECRET_BYTES = 4096;

export class ClientSecret {
  readonly #value: string;
  /** A digest of the secret, domain-separated, for comparison only. */
  readonly fingerprint: string;

  constructor(value: string) {
    this.#value = value;
    this.fingerprint = createHash('sha256').update('authgate introspection client secret\n').update(value).digest('hex').slice(0, 16);
  }

  reveal(): string {
    return this.#value;
  }

  toJSON(): string {
    return `secret:${this.fingerprint}`;
  }

  toString(): string {
    return '[client secret]';
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return '[client secret]';
  }
}

/**
 * The secret in `file` (relative to the routes file `source`, or to the working directory for
 * a table with no file), one trailing newline dropped; or why it cannot be had. The reason never
 * holds the file's content.
 */
export function readClientSecret(file: string, source: string | undefined): ClientSecret | string {
  const path = isAbsolute(file) || source === undefined ? resolve(file) : resolve(dirname(source), file);
  let text: string;
  try {
    if (statSync(path).size > MAX_SECRET_BYTES) return `${path} is larger than ${MAX_SECRET_BYTES} bytes`;
    text = readFileSync(path, 'utf8');
  } catch (error) {
    return `${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`;
  }
  const value = text.replace(/\r?\n$/, '');
  if (value === '') return `${path} is empty`;
  // RFC 6749 §2.3.1 form-encodes it in the Basic header; a line break inside is a mistake in the file, not a secret.
  if (/[\r\n]/.test(value)) return `${path} holds more than one line`;
  return new ClientSecret(value);
}
