import { availableParallelism } from 'node:os';
import { hash, verify, type Algorithm } from '@node-rs/argon2';
import { Problem } from '../problems.js';

/**
 * argon2id at OWASP's recommended minimum (19 MiB, 2 passes, 1 lane). @node-rs/argon2 runs on
 * libuv's thread pool, so hashing never blocks the event loop.
 */
// Algorithm is a const enum (Argon2id = 2), which a type-stripping loader cannot inline; the tests
// check the hashes are argon2id.
const OPTIONS = { algorithm: 2 satisfies Algorithm.Argon2id as Algorithm.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

/**
 * The longest password a login accepts: longer inputs are refused before hashing (they cost CPU).
 * Passwords set before the policy (credentials/password-policy.ts: at most 128) could have up to
 * this many, and they keep working.
 */
export const MAX_PASSWORD_LENGTH = 1024;

/**
 * At most this many hashes at once per gateway, leaving a core to the event loop: with every core hashing,
 * a login burst starved the proxying (event-loop delay p99 23 ms → 15 ms on 2 cores with one
 * slot; docs/performance.md). Logins queue instead; their throughput does not change.
 */
const HASH_SLOTS = Math.max(1, availableParallelism() - 1);
/**
 * And at most this many waiting for a slot. Unbounded, one burst could park any number of guesses
 * and sockets, each waiting longer than the last. One hash takes ~13 ms of a core (77 logins/s
 * per slot in docs/performance.md), so 32 per slot is about half a second of work queued: a
 * person logging in never notices, and past that the client is told at once to come back.
 */
export const QUEUE_PER_SLOT = 32;
/** Retry-After of a refusal: the queue drains within it at the measured rate. */
const QUEUE_RETRY_AFTER_SECONDS = 1;

export type SlotQueue = Readonly<{
  /** Runs work when a slot is free; throws the 503 `overloaded` problem at once if the queue is full. */
  run<T>(work: () => Promise<T>): Promise<T>;
  /** Running and waiting right now. */
  readonly busy: number;
  readonly waiting: number;
}>;

/** A FIFO of at most `slots` running and `maxWaiting` waiting; exported for its tests. */
export function createSlotQueue(slots: number, maxWaiting: number): SlotQueue {
  let busy = 0;
  const waiting: Array<() => void> = [];
  return {
    get busy() {
      return busy;
    },
    get waiting() {
      return waiting.length;
    },
    async run<T>(work: () => Promise<T>): Promise<T> {
      if (busy < slots) busy++;
      else if (waiting.length < maxWaiting) await new Promise<void>((resolve) => waiting.push(resolve));
      else throw new Problem('overloaded', 'Too many logins at once; try again shortly.', 'login_queue_full', QUEUE_RETRY_AFTER_SECONDS);
      try {
        return await work();
      } finally {
        const next = waiting.shift();
        if (next !== undefined) next(); // the slot passes straight to the next waiter
        else busy--;
      }
    },
  };
}

export type PasswordHasher = Readonly<{
  hash(password: string): Promise<string>;
  /** False for a wrong password or a corrupt hash; throws the 503 problem when the queue is full. */
  verify(passwordHash: string, password: string): Promise<boolean>;
  /**
   * For unknown e-mails: verifying against a real hash of a random password makes a miss take
   * as long as a wrong password, so timing does not tell which e-mails exist.
   */
  dummyVerifier(): Promise<(password: string) => Promise<false>>;
}>;

/**
 * Hashing and verifying through one slot queue: each gateway makes its own (buildGateway), so two
 * gateways in one process (tests, or a host embedding authgate) never queue behind each other.
 */
export function createPasswordHasher(queue: SlotQueue = createSlotQueue(HASH_SLOTS, QUEUE_PER_SLOT * HASH_SLOTS)): PasswordHasher {
  const hashPassword = (password: string) => queue.run(() => hash(password, OPTIONS));
  const verifyPassword = (passwordHash: string, password: string) =>
    queue.run(async () => {
      try {
        return await verify(passwordHash, password);
      } catch {
        return false; // a corrupt hash is a failed login, not a crash
      }
    });
  return {
    hash: hashPassword,
    verify: verifyPassword,
    async dummyVerifier() {
      const dummyHash = await hashPassword(`dummy-${Math.random()}-${Date.now()}`);
      return async (password) => {
        await verifyPassword(dummyHash, password);
        return false;
      };
    },
  };
}
