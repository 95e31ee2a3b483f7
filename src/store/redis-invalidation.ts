import { randomUUID } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import type { Invalidation, InvalidationBus, InvalidationListener } from './invalidation.js';
import { StoreUnavailable, type Revoked } from './store.js';

type Logger = { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };

export type RedisInvalidationBusOptions = {
  /** The store's command connection: PUBLISH goes over it, and duplicate() gives the subscriber. */
  connection: Redis | Cluster;
  channel: string;
  /** How long publish() waits for Redis before throwing StoreUnavailable. */
  commandTimeoutMs: number;
  /** How often this bus publishes an empty message so that gaps and silence show; 1000 by default. */
  heartbeatMs?: number;
  /** Called when the subscription stops (connection dropped, or our own messages stop coming back). */
  onSubscriptionLost?: () => void;
  logger?: Logger;
};

/** What travels on the channel. Only key hashes and session ids: never a secret. */
type Message = { origin: string; seq: number; revoked: Revoked[] };

/**
 * An InvalidationBus over Redis pub/sub, on its own subscriber connection.
 *
 * Pub/sub delivers at most once, so the bus looks for the moments it may have missed something
 * and then tells its listeners 'all' (clear everything):
 * - the subscriber connection dropped: 'all' once SUBSCRIBE has been answered again (an answer
 *   on that connection proves the subscription is live; the 'ready' event alone comes earlier);
 * - a gap in another bus's sequence numbers: a message of theirs never arrived, also when their
 *   PUBLISH failed (publish() throws then, but their seq was spent, so we still notice);
 * - our own messages stopped coming back (Cluster moves its subscriber between nodes without
 *   telling us): onSubscriptionLost, then 'all' when they come back.
 * Every bus publishes an empty heartbeat each heartbeatMs, which is what makes gaps and silence
 * visible within about a heartbeat.
 */
export function createRedisInvalidationBus(options: RedisInvalidationBusOptions): InvalidationBus {
  const { connection, channel, logger } = options;
  const heartbeatMs = options.heartbeatMs ?? 1000;
  const origin = randomUUID();
  const listeners: InvalidationListener[] = [];
  const subscriber = connection.duplicate();
  let seq = 0;
  let closed = false;
  let subscribed = false;
  let subscribing = false;
  let lastOwnSeq: number | undefined;
  let lastOwnEchoAt = Date.now();
  /** Our seqs whose PUBLISH failed: their absence is no sign of a broken subscription. */
  const failedSeqs = new Set<number>();
  const peers = new Map<string, { seq: number; seenAt: number }>();

  function tell(invalidation: Invalidation): void {
    for (const listener of listeners) {
      try {
        listener(invalidation);
      } catch (error) {
        logger?.warn({ err: describe(error) }, 'invalidation listener failed');
      }
    }
  }

  function lost(reason: string): void {
    if (closed || !subscribed) return;
    subscribed = false;
    logger?.warn({ reason }, 'invalidation subscription lost; caches are cleared when it is back');
    try {
      options.onSubscriptionLost?.();
    } catch (error) {
      logger?.warn({ err: describe(error) }, 'onSubscriptionLost failed');
    }
  }

  function recovered(reason: string): void {
    subscribed = true;
    lastOwnSeq = undefined;
    lastOwnEchoAt = Date.now();
    peers.clear();
    logger?.info({ reason }, 'invalidation subscription live; clearing caches');
    tell('all');
  }

  function missed(reason: string): void {
    logger?.warn({ reason }, 'invalidation messages missed; clearing caches');
    tell('all');
  }

  async function subscribe(): Promise<void> {
    if (closed || subscribing) return;
    subscribing = true;
    try {
      await subscriber.subscribe(channel);
      if (!closed) recovered('subscribed');
    } catch (error) {
      logger?.warn({ err: describe(error) }, 'could not subscribe to invalidations; retrying');
    } finally {
      subscribing = false;
    }
  }

  function onOwnMessage(message: Message): void {
    lastOwnEchoAt = Date.now();
    if (!subscribed) {
      recovered('own messages arrive again');
      lastOwnSeq = message.seq;
      return;
    }
    if (lastOwnSeq !== undefined && message.seq > lastOwnSeq + 1) {
      for (let s = lastOwnSeq + 1; s < message.seq; s++) {
        if (!failedSeqs.has(s)) {
          missed('one of our own messages never came back');
          break;
        }
      }
    }
    if (lastOwnSeq === undefined || message.seq > lastOwnSeq) lastOwnSeq = message.seq;
    for (const s of failedSeqs) if (s <= lastOwnSeq) failedSeqs.delete(s);
  }

  function onPeerMessage(message: Message): void {
    if (message.revoked.length > 0) tell(message.revoked);
    const peer = peers.get(message.origin);
    const now = Date.now();
    if (peer === undefined) {
      peers.set(message.origin, { seq: message.seq, seenAt: now });
      return;
    }
    peer.seenAt = now;
    if (message.seq > peer.seq + 1) missed('a message from another replica never arrived');
    // A lower seq arrived late (Cluster may route two PUBLISHes through different nodes).
    if (message.seq > peer.seq) peer.seq = message.seq;
  }

  subscriber.on('message', (from: unknown, text: unknown) => {
    if (closed || from !== channel || typeof text !== 'string') return;
    const message = parseMessage(text);
    if (message === undefined) return; // not ours: ignore
    if (message.origin === origin) onOwnMessage(message);
    else onPeerMessage(message);
  });
  subscriber.on('ready', () => void subscribe());
  subscriber.on('close', () => lost('subscriber connection closed'));
  subscriber.on('end', () => lost('subscriber connection ended'));
  subscriber.on('error', () => {}); // the store's connection logs connection trouble

  async function send(revoked: readonly Revoked[]): Promise<void> {
    const mySeq = ++seq;
    const message: Message = {
      origin,
      seq: mySeq,
      revoked: revoked.map((r) => ({ kind: r.kind, cacheKey: r.cacheKey })),
    };
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        connection.publish(channel, JSON.stringify(message)),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('publish timed out')), options.commandTimeoutMs);
        }),
      ]);
    } catch (error) {
      failedSeqs.add(mySeq);
      throw new StoreUnavailable('could not publish invalidation', { cause: new Error(describe(error)) });
    } finally {
      clearTimeout(timer);
    }
  }

  const heartbeat = setInterval(() => {
    if (closed) return;
    send([]).catch(() => {});
    const now = Date.now();
    if (subscribed && now - lastOwnEchoAt > 3 * heartbeatMs) lost('our own messages stopped coming back');
    if (!subscribed && subscriber.status === 'ready') void subscribe();
    for (const [peerOrigin, peer] of peers) if (now - peer.seenAt > 30 * heartbeatMs) peers.delete(peerOrigin);
  }, heartbeatMs);
  heartbeat.unref();

  return {
    async publish(revoked) {
      if (revoked.length === 0) return;
      tell(revoked); // this replica first, at once
      await send(revoked);
    },
    onInvalidation(listener) {
      listeners.push(listener);
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(heartbeat);
      listeners.length = 0;
      await quitRedisConnection(subscriber);
    },
  };
}

function parseMessage(text: string): Message | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isRecord(value)) return undefined;
  const { origin, seq, revoked } = value;
  if (typeof origin !== 'string' || origin.length === 0) return undefined;
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1) return undefined;
  if (!Array.isArray(revoked)) return undefined;
  const items: Revoked[] = [];
  for (const item of revoked as unknown[]) {
    if (!isRecord(item)) return undefined;
    const { kind, cacheKey } = item;
    if (kind !== 'api_key' && kind !== 'session') return undefined;
    if (typeof cacheKey !== 'string' || cacheKey.length === 0) return undefined;
    items.push({ kind, cacheKey });
  }
  return { origin, seq, revoked: items };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Name and message only: ioredis errors can carry the command's arguments. */
function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** Quits politely, but never waits long for a server that is gone. */
export async function quitRedisConnection(client: Redis | Cluster): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      client.quit(),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, 1000);
      }),
    ]);
  } catch {
    // Not connected: disconnect() below stops the reconnecting.
  } finally {
    clearTimeout(timer);
    client.disconnect();
  }
}
