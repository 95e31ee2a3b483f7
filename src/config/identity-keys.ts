// The identity assertion's settings (issue 16), read apart from config/load.ts: whether it is on,
// and its signing and published keys, each file read and checked now so a start fails on a bad key.
import { readFileSync } from 'node:fs';
import { keyProblem } from '../identity/signing-keys.js';
import type { Config } from './config.js';
import type { SettingsReader } from './redis-tls.js';

/**
 * The identity assertion's keys, read from their files and checked here, so a bad key stops the
 * start with its setting's name (never its content). Production needs a signing key while the
 * assertion is on: replicas with keys of their own would each sign what the others' JWKS does
 * not hold.
 */
export function readIdentity({ setting, given, fail }: SettingsReader, production: boolean): Config['identity'] {
  const keySettings = ['AUTHGATE_IDENTITY_KEY_FILE', 'AUTHGATE_IDENTITY_PUBLISHED_KEY_FILES', 'AUTHGATE_IDENTITY_AUDIENCE'] as const;
  if (setting('AUTHGATE_IDENTITY_ASSERTION') === 'off') {
    for (const name of [...keySettings, 'AUTHGATE_IDENTITY_TTL_SECONDS'] as const) if (given(name)) fail(name, 'is set but AUTHGATE_IDENTITY_ASSERTION is off');
    if (given('AUTHGATE_IDENTITY_JWKS_ON_PUBLIC_PORT') && setting('AUTHGATE_IDENTITY_JWKS_ON_PUBLIC_PORT') === 'on') fail('AUTHGATE_IDENTITY_JWKS_ON_PUBLIC_PORT', 'is on but AUTHGATE_IDENTITY_ASSERTION is off: there are no keys to serve');
    return { mode: 'off' };
  }
  const keyFile = setting('AUTHGATE_IDENTITY_KEY_FILE');
  if (keyFile === undefined && production) {
    fail('AUTHGATE_IDENTITY_KEY_FILE', 'is required in production while AUTHGATE_IDENTITY_ASSERTION is on (or set it off)');
  }
  const readKey = (name: 'AUTHGATE_IDENTITY_KEY_FILE' | 'AUTHGATE_IDENTITY_PUBLISHED_KEY_FILES', file: string, want: 'private' | 'public') => {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      return fail(name, `cannot be read${name === 'AUTHGATE_IDENTITY_PUBLISHED_KEY_FILES' ? ` (${file})` : ''}`);
    }
    const problem = keyProblem(text, want);
    return problem === undefined ? text : fail(name, `${problem}${name === 'AUTHGATE_IDENTITY_PUBLISHED_KEY_FILES' ? ` (${file})` : ''}`);
  };
  const signingKey = keyFile === undefined ? undefined : readKey('AUTHGATE_IDENTITY_KEY_FILE', keyFile, 'private');
  const publishedKeys = (setting('AUTHGATE_IDENTITY_PUBLISHED_KEY_FILES') ?? []).flatMap((file) => readKey('AUTHGATE_IDENTITY_PUBLISHED_KEY_FILES', file, 'public') ?? []);
  return {
    mode: 'on',
    signingKey,
    publishedKeys,
    audience: setting('AUTHGATE_IDENTITY_AUDIENCE'),
    ttlSeconds: setting('AUTHGATE_IDENTITY_TTL_SECONDS'),
    jwksOnPublicPort: setting('AUTHGATE_IDENTITY_JWKS_ON_PUBLIC_PORT') === 'on',
  };
}
