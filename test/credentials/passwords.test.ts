import t from 'tap';
import { createPasswordHasher } from '../../src/credentials/passwords.js';

// One gateway's hasher, as buildGateway makes it.
const { hash: hashPassword, verify: verifyPassword, dummyVerifier } = createPasswordHasher();

const PASSWORD = 'correct horse battery staple';

t.test('hashes are argon2id at m=19456, t=2, p=1, salted', async (t) => {
  const hash = await hashPassword(PASSWORD);
  t.match(hash, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/);
  t.notOk(hash.includes(PASSWORD));
  t.not(await hashPassword(PASSWORD), hash, 'a fresh salt each time');
});

t.test('verify: the right password only', async (t) => {
  const hash = await hashPassword(PASSWORD);
  t.equal(await verifyPassword(hash, PASSWORD), true);
  t.equal(await verifyPassword(hash, PASSWORD + ' '), false);
  t.equal(await verifyPassword(hash, PASSWORD.toUpperCase()), false);
  t.equal(await verifyPassword(hash, ''), false);
  const unicode = 'pässwörd-✓-0123';
  t.equal(await verifyPassword(await hashPassword(unicode), unicode), true);
});

t.test('a corrupt hash is a false, not a throw', async (t) => {
  const hash = await hashPassword(PASSWORD);
  for (const corrupt of ['', 'not-a-hash', hash.slice(0, 20), hash.replace('$argon2id$', '$argon2xx$'), '$argon2id$v=19$m=19456,t=2,p=1$$']) {
    t.equal(await verifyPassword(corrupt, PASSWORD), false, JSON.stringify(corrupt));
  }
  // The hash part changed: a well-formed hash of something else.
  const parts = hash.split('$');
  const last = parts[parts.length - 1]!;
  parts[parts.length - 1] = (last[0] === 'A' ? 'B' : 'A') + last.slice(1);
  t.equal(await verifyPassword(parts.join('$'), PASSWORD), false);
});

t.test('the dummy verifier always says false', async (t) => {
  const dummy = await dummyVerifier();
  for (const password of [PASSWORD, '', 'dummy-', 'x'.repeat(100)]) t.equal(await dummy(password), false);
});

t.test('concurrent hashes queue for their slots and all complete', async (t) => {
  const { hash: h, verify: v } = createPasswordHasher();
  const hashes = await Promise.all(Array.from({ length: 8 }, (_, i) => h(`password-number-${i}`)));
  const results = await Promise.all(hashes.map((hashed, i) => v(hashed, `password-number-${i}`)));
  t.same(results, Array(8).fill(true), 'every queued hash and verify completed correctly');
  t.equal(await v(hashes[0]!, 'password-number-1'), false);
});

t.test('the slot queue: at most `slots` run, at most `maxWaiting` wait, the rest refused at once', async (t) => {
  const { createSlotQueue } = await import('../../src/credentials/passwords.js');
  const { Problem } = await import('../../src/problems.js');
  const queue = createSlotQueue(2, 3);
  const gates: Array<() => void> = [];
  const started: number[] = [];
  const job = (i: number) => () => {
    started.push(i);
    return new Promise<number>((resolve) => gates.push(() => resolve(i)));
  };
  const running = [0, 1, 2, 3, 4].map((i) => queue.run(job(i)));
  await new Promise((resolve) => setImmediate(resolve));
  t.strictSame(started, [0, 1], 'two run');
  t.equal(queue.busy, 2);
  t.equal(queue.waiting, 3);

  const refused = await queue.run(job(5)).then(() => undefined, (error: unknown) => error);
  t.ok(refused instanceof Problem, 'the sixth is refused');
  if (refused instanceof Problem) {
    t.equal(refused.problem, 'overloaded');
    t.ok((refused.retryAfterSeconds ?? 0) >= 1, 'with a Retry-After');
  }
  t.strictSame(started, [0, 1], 'without having run');
  t.equal(queue.waiting, 3, 'nor queued');

  gates.shift()!();
  t.equal(await running[0], 0);
  await new Promise((resolve) => setImmediate(resolve));
  t.strictSame(started, [0, 1, 2], 'the slot passed to the first waiter');
  const sixth = queue.run(job(6));
  t.equal(queue.waiting, 3, 'a freed place in the queue is taken again');
  while (gates.length > 0 || queue.busy > 0) {
    await new Promise((resolve) => setImmediate(resolve));
    gates.shift()?.();
  }
  t.strictSame(await Promise.all([...running, sixth]), [0, 1, 2, 3, 4, 6]);
  t.strictSame(started, [0, 1, 2, 3, 4, 6], 'in arrival order');
  t.equal(queue.busy, 0);
  t.equal(queue.waiting, 0);
});

t.test('the slot queue: a failing job frees its slot', async (t) => {
  const { createSlotQueue } = await import('../../src/credentials/passwords.js');
  const queue = createSlotQueue(1, 1);
  await t.rejects(queue.run(async () => {
    throw new Error('boom');
  }), /boom/);
  t.equal(queue.busy, 0);
  t.equal(await queue.run(async () => 'next'), 'next');
});

t.test('a burst of verifies beyond the queue: refused at once with the 503 problem, never judged false', async (t) => {
  const { QUEUE_PER_SLOT } = await import('../../src/credentials/passwords.js');
  const { availableParallelism } = await import('node:os');
  const { Problem } = await import('../../src/problems.js');
  const hash = await hashPassword(PASSWORD);
  const slots = Math.max(1, availableParallelism() - 1);
  const burst = slots * (QUEUE_PER_SLOT + 1) + 20;
  const outcomes = await Promise.all(Array.from({ length: burst }, () => verifyPassword(hash, PASSWORD).then(
    (valid) => (valid ? 'valid' : 'invalid'),
    (error: unknown) => (error instanceof Problem && error.problem === 'overloaded' ? 'overloaded' : String(error)),
  )));
  const count = (what: string) => outcomes.filter((outcome) => outcome === what).length;
  t.equal(count('invalid'), 0, 'a refusal is never a wrong password');
  t.ok(count('overloaded') >= 20, `${count('overloaded')} of ${burst} refused`);
  t.equal(count('valid') + count('overloaded'), burst);
  t.ok(count('valid') <= slots * (QUEUE_PER_SLOT + 1), 'no more judged than run and wait');
});

t.test('each hasher has its own queue: a burst that fills one gateway\'s never refuses another\'s', async (t) => {
  const { QUEUE_PER_SLOT } = await import('../../src/credentials/passwords.js');
  const { availableParallelism } = await import('node:os');
  const { Problem } = await import('../../src/problems.js');
  const flooded = createPasswordHasher();
  const other = createPasswordHasher();
  const hash = await other.hash(PASSWORD);
  const slots = Math.max(1, availableParallelism() - 1);
  // Enqueued synchronously: the flooded queue is full before the other hasher is asked.
  const burst = Array.from({ length: slots * (QUEUE_PER_SLOT + 1) + 5 }, () =>
    flooded.verify(hash, PASSWORD).then(() => 'judged', (error: unknown) => (error instanceof Problem && error.problem === 'overloaded' ? 'overloaded' : String(error))),
  );
  const mine = other.verify(hash, PASSWORD).then(String, (error: unknown) => (error instanceof Problem ? error.problem : String(error)));
  const outcomes = await Promise.all(burst);
  t.ok(outcomes.includes('overloaded'), 'the flooded queue refused some');
  t.equal(await mine, 'true', 'the other gateway\'s verify ran and judged');
});
