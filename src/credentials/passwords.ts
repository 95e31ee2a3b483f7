import { Algorithm, hash, verify } from '@node-rs/argon2';

/**
 * argon2id at OWASP's recommended minimum (19 MiB, 2 passes, 1 lane). @node-rs/argon2 runs on
 * libuv's thread pool, so hashing never blocks the event loop.
 */
const OPTIONS = { algorithm: Algorithm.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export const MIN_PASSWORD_LENGTH = 12;
/** Longer inputs are refused before hashing: nobody needs them, and they cost CPU. */
export const MAX_PASSWORD_LENGTH = 1024;

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false; // a corrupt hash is a failed login, not a crash
  }
}

/**
 * For unknown e-mails: verifying against a real hash of a random password makes a miss take
 * as long as a wrong password, so timing does not tell which e-mails exist.
 */
export async function createDummyVerifier(): Promise<(password: string) => Promise<false>> {
  const dummyHash = await hashPassword(`dummy-${Math.random()}-${Date.now()}`);
  return async (password) => {
    await verifyPassword(dummyHash, password);
    return false;
  };
}
