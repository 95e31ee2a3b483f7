import t from 'tap';
import { DEFAULT_TUNING, retryDelayMs } from '../../src/notices/delivery.js';

// The notices' backoff (notices/delivery.ts): doubling, capped, half of it random, Retry-After honoured within the cap.

t.test('waits double per attempt, within [half, whole] of the backoff, capped', async (t) => {
  const tuning = DEFAULT_TUNING;
  for (let attempts = 1; attempts <= 5; attempts++) {
    const backoff = tuning.baseDelayMs * 2 ** (attempts - 1);
    t.equal(retryDelayMs(attempts, tuning, undefined, () => 0), backoff / 2, `attempt ${attempts}: at least half`);
    t.equal(retryDelayMs(attempts, tuning, undefined, () => 1), backoff, `attempt ${attempts}: at most the whole`);
  }
  t.equal(retryDelayMs(30, tuning, undefined, () => 1), tuning.maxDelayMs, 'capped');
  const spread = new Set(Array.from({ length: 50 }, () => retryDelayMs(3, tuning)));
  t.ok(spread.size > 40, 'jittered: waits differ');
  t.ok([...spread].every((d) => d >= 2000 && d <= 4000), 'within the third wait\'s band');
});

t.test("a receiver's Retry-After lengthens the wait, never past the cap", async (t) => {
  t.equal(retryDelayMs(1, DEFAULT_TUNING, 30_000, () => 0), 30_000);
  t.equal(retryDelayMs(1, DEFAULT_TUNING, 3_600_000, () => 0), DEFAULT_TUNING.maxDelayMs);
  t.equal(retryDelayMs(5, DEFAULT_TUNING, 1000, () => 1), 16_000, 'a shorter Retry-After does not shorten it');
});
