// Sends signed notices to the webhook off the request path: a bounded queue, retries, a drain on close.
import { Agent as HttpAgent, request as httpRequest, type ClientRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { randomUUID } from 'node:crypto';
import type { Logger } from '../observability/logging.js';
import type { ConcernedRef, NoticeMember } from './member-concerned.js';
import { noticeBody, signedNotice, type NoticeOrganization, type NoticeSource } from './notice.js';

/** authgate_notices_total's outcomes. */
export type NoticeOutcome = 'delivered' | 'failed' | 'dropped' | 'retried';

/** How hard the queue tries; the defaults are the gateway's, tests shorten the waits. */
export type DeliveryTuning = Readonly<{
  /** Notices waiting, being sent or waiting to retry, at most; one more is dropped (and counted). */
  maxQueued: number;
  /** Attempts under way at once: a webhook that hangs holds these, never a request. */
  concurrency: number;
  /** Attempts per notice, the first included. */
  maxAttempts: number;
  /** The wait before the second attempt; doubled for each later one, up to maxDelayMs, half of it random. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** One attempt, from connecting to the end of the answer. */
  attemptTimeoutMs: number;
  /** How long close() goes on sending what is queued (one last attempt each, no more waits). */
  drainMs: number;
}>;

export const DEFAULT_TUNING: DeliveryTuning = {
  maxQueued: 1000,
  concurrency: 4,
  maxAttempts: 6,
  baseDelayMs: 1000,
  maxDelayMs: 60_000,
  attemptTimeoutMs: 5000,
  drainMs: 5000,
};

export type NoticeDelivery = {
  /** Queues a notice of the event (synchronously; never waits, never throws). */
  enqueue(source: Omit<NoticeSource, 'id'>): void;
  /** Notices queued, under way or waiting to retry. */
  pending(): number;
  /** Sends what is queued (bounded by drainMs), then lets go of the connections. */
  close(): Promise<void>;
};

type Entry = { source: NoticeSource; attempts: number; timer?: NodeJS.Timeout };
type Attempt = { ok: true } | { ok: false; retry: boolean; reason: string; retryAfterMs?: number };

export function createNoticeDelivery(deps: {
  webhookUrl: string;
  secret: string;
  /** The organization now (undefined: deleted); throws when the store does not answer (then retried). */
  organization: (orgId: string) => Promise<NoticeOrganization | undefined>;
  /** The member a notice concerns, now (member-concerned.ts); throws when the store does not answer (then retried). */
  member?: (orgId: string, ref: ConcernedRef) => Promise<NoticeMember>;
  now: () => number;
  logger: Pick<Logger, 'warn'>;
  count: (outcome: NoticeOutcome) => void;
  tuning?: Partial<DeliveryTuning>;
}): NoticeDelivery {
  const tuning = { ...DEFAULT_TUNING, ...deps.tuning };
  const url = new URL(deps.webhookUrl);
  // What a log line may name: scheme, host and port. Never the user and password the URL may carry
  // (sent as Basic auth by node:http), nor its path, which some receivers make a secret of.
  const webhook = url.origin;
  const https = url.protocol === 'https:';
  const agent = https ? new HttpsAgent({ keepAlive: true, maxSockets: tuning.concurrency }) : new HttpAgent({ keepAlive: true, maxSockets: tuning.concurrency });

  const ready: Entry[] = [];
  const waiting = new Set<Entry>();
  const inFlight = new Set<ClientRequest>();
  const attempts = new Set<Promise<void>>();
  let sending = 0;
  let closing = false;
  let overflowing = false;
  let idle: (() => void) | undefined;

  const pending = () => ready.length + waiting.size + sending;

  function pump(): void {
    while (sending < tuning.concurrency && ready.length > 0) {
      const entry = ready.shift()!;
      sending++;
      const settled: Promise<void> = attempt(entry).finally(() => {
        attempts.delete(settled);
        sending--;
        pump();
        if (pending() === 0) idle?.();
      });
      attempts.add(settled);
    }
  }

  async function attempt(entry: Entry): Promise<void> {
    entry.attempts++;
    const outcome = await send(entry.source);
    if (outcome.ok) {
      deps.count('delivered');
      return;
    }
    if (outcome.retry && entry.attempts < tuning.maxAttempts && !closing) {
      deps.count('retried');
      const delay = retryDelayMs(entry.attempts, tuning, outcome.retryAfterMs);
      waiting.add(entry);
      entry.timer = setTimeout(() => {
        waiting.delete(entry);
        ready.push(entry);
        pump();
      }, delay);
      return;
    }
    deps.count('failed');
    const { event } = entry.source;
    deps.logger.warn(
      { event: 'notice_failed', noticeId: entry.source.id, type: event.type, orgId: event.orgId, attempts: entry.attempts, reason: outcome.reason, webhook },
      'a security notice was not delivered',
    );
  }

  /** One attempt: the organization as it is now, a fresh timestamp and signature, one POST. */
  async function send(source: NoticeSource): Promise<Attempt> {
    let organization: NoticeOrganization | undefined;
    let member: NoticeMember | null = null;
    try {
      organization = await deps.organization(source.event.orgId);
      if (source.concerns !== undefined && deps.member !== undefined) member = await deps.member(source.event.orgId, source.concerns);
    } catch {
      return { ok: false, retry: true, reason: 'store_unavailable' };
    }
    const body = noticeBody(source, organization ?? { id: source.event.orgId, name: null, email: null }, Math.floor(deps.now() / 1000), member);
    const { raw, headers } = signedNotice(body, deps.secret);
    return new Promise<Attempt>((resolve) => {
      const req = (https ? httpsRequest : httpRequest)(url, { method: 'POST', headers, agent }, (res) => {
        const status = res.statusCode ?? 0;
        res.resume();
        // Cut off mid-answer (the attempt's timeout, a reset): as a network error.
        res.on('error', () => resolve({ ok: false, retry: true, reason: 'answer_cut_off' }));
        res.on('end', () => {
          clearTimeout(timer);
          inFlight.delete(req);
          if (status >= 200 && status < 300) resolve({ ok: true });
          else resolve({ ok: false, retry: status === 429 || status >= 500, reason: `status ${status}`, retryAfterMs: retryAfterMs(res.headers['retry-after']) });
        });
      });
      const timer = setTimeout(() => req.destroy(new TimeoutError()), tuning.attemptTimeoutMs);
      inFlight.add(req);
      req.on('error', (error: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        inFlight.delete(req);
        // The error's code only (ECONNREFUSED, timeout): a message may quote the URL.
        resolve({ ok: false, retry: true, reason: error instanceof TimeoutError ? 'timeout' : (error.code ?? 'network_error') });
      });
      req.end(raw);
    });
  }

  return {
    enqueue(source) {
      if (closing || pending() >= tuning.maxQueued) {
        deps.count('dropped');
        // One line when dropping starts, not one per notice: a flood must not become a log flood.
        if (!overflowing) deps.logger.warn({ event: 'notices_dropped', type: source.event.type, queued: pending(), webhook }, 'security notices dropped: the queue is full');
        overflowing = true;
        return;
      }
      overflowing = false;
      ready.push({ source: { ...source, id: randomUUID() }, attempts: 0 });
      // Never on this turn: the request that recorded the event is answered first.
      setImmediate(pump);
    },
    pending,
    async close() {
      closing = true;
      // Those waiting to retry get their last attempt now instead of after their wait.
      for (const entry of waiting) {
        clearTimeout(entry.timer);
        ready.push(entry);
      }
      waiting.clear();
      pump();
      if (pending() > 0) {
        let deadline: NodeJS.Timeout | undefined;
        await new Promise<void>((resolve) => {
          idle = resolve;
          deadline = setTimeout(resolve, tuning.drainMs);
        });
        clearTimeout(deadline);
      }
      const left = ready.length + sending;
      if (left > 0) {
        for (let i = 0; i < ready.length; i++) deps.count('failed');
        ready.length = 0;
        for (const req of inFlight) req.destroy(new TimeoutError());
        // Those cut off settle at once (failed: no retry while closing), before the store closes.
        await Promise.allSettled([...attempts]);
        deps.logger.warn({ event: 'notices_abandoned', notices: left, webhook }, 'security notices still undelivered at shutdown');
      }
      agent.destroy();
    },
  };
}

/**
 * The wait after the `attempts`-th failed attempt: baseDelayMs doubled per attempt, capped at
 * maxDelayMs, its upper half random ("equal jitter": replicas that failed together do not come back
 * together, and the wait still grows); at least the receiver's Retry-After, still within the cap.
 */
export function retryDelayMs(attempts: number, tuning: Pick<DeliveryTuning, 'baseDelayMs' | 'maxDelayMs'>, retryAfterMs?: number, random: () => number = Math.random): number {
  const backoff = Math.min(tuning.maxDelayMs, tuning.baseDelayMs * 2 ** (attempts - 1));
  return Math.min(tuning.maxDelayMs, Math.max(backoff / 2 + random() * (backoff / 2), retryAfterMs ?? 0));
}

class TimeoutError extends Error {
  constructor() {
    super('notice attempt timed out');
  }
}

/** A Retry-After in seconds (a receiver's own backoff), else undefined; dates are not worth the parsing. */
function retryAfterMs(value: string | undefined): number | undefined {
  return value !== undefined && /^\d{1,6}$/.test(value.trim()) ? Number(value) * 1000 : undefined;
}
