import { availableParallelism } from 'node:os';
import { Algorithm, hash, verify } from '@node-rs/argon2';

/**
 * argon2id at OWASP's recommended minimum (19 MiB, 2 passes, 1 lane). @node-rs/argon2 runs on
 * libuv's thread pool, so hashing never blocks the event loop.
 */
const OPTIONS = { algorithm: Algorithm.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export const MIN_PASSWORD_LENGTH = 12;
/** Longer inputs are refused before hashing: nobody needs them, and they cost CPU. */
export const MAX_PASSWORD_LENGTH = 1024;

/**
 * At most this many hashes at once, leaving a core to the event loop: with every core hashing,
 * a login burst starved the proxying (event-loop delay p99 23 ms → 15 ms on 2 cores with one
 * slot; docs/performance.md). Logins queue instead; their throughput does not change.
 */
const HASH_SLOTS = Math.max(1, availableParallelism() - 1);
let busy = 0;
const waiting: Array<() => void> = [];

async function inSlot<T>(work: () => Promise<T>): Promise<T> {
  if (busy >= HASH_SLOTS) await new Promise<void>((resolve) => waiting.push(resolve));
  else busy++;
  try {
    return await work();
  } finally {
    const next = waiting.shift();
    if (next !== undefined) next(); // the slot passes straight to the next waiter
    else busy--;
  }
}

export function hashPassword(password: string): Promise<string> {
  return inSlot(() => hash(password, OPTIONS));
}

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await inSlot(() => verify(passwordHash, password));
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
