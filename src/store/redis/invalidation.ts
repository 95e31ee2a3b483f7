/**
 * The revocation bus over Redis pub/sub: hands the store's revoking scripts the message they
 * PUBLISH, listens on its own subscriber connection, and says whether this replica may trust
 * its credential cache (createRedisInvalidationBus below says how). What a message holds, and how
 * one is written and read, is invalidation-messages.ts.
 */
import { randomUUID } from 'node:crypto';
import type { Invalidation, InvalidationBus, InvalidationListener, SubscriptionListener } from '../invalidation.js';
import type { Revoked } from '../store.js';
import { quitRedisConnection, type Client } from './connection.js';
import { messageHead, parseMessage, type Message } from './invalidation-messages.js';
import { describe, withDeadline, type Logger } from './support.js';

export type RedisInvalidationBusOptions = {
  /** The store's command connection: heartbeats go over it, and duplicate() gives the subscriber. */
  connection: Client;
  channel: string;
  /** How long a heartbeat PUBLISH may take before it counts as failed. */
  commandTimeoutMs: number;
  /** How often this bus publishes an empty message so that gaps and silence show; 1000 by default. */
  heartbeatMs?: number;
  /**
   * Called when a confirmed subscription stops (connection dropped, or our own messages stop
   * coming back), after the bus has logged it.
   */
  onSubscriptionLost?: () => void;
  logger?: Logger;
};

/**
 * One message of this replica, for a store script to PUBLISH in the same step as its write.
 * `head` is the JSON up to the revoked list: the script appends `[…]}` (with what it revoked, or
 * nothing: every message it is handed must go out, so that the sequence has no holes).
 * settle() says whether the caller got the script's answer: true when it did (it then applies
 * the revocation locally itself), false when it got an error, so the message's absence is no sign
 * of a broken subscription, and its echo, if the script ran after all, is applied here.
 */
export type OutgoingMessage = Readonly<{ head: string; settle(answered: boolean): void }>;

export type RedisInvalidationBus = InvalidationBus & {
  nextMessage(): OutgoingMessage;
};

/**
 * An InvalidationBus over Redis pub/sub, on its own subscriber connection.
 *
 * Revocations are PUBLISHed by the store's scripts, inside the same Lua step as the write, with
 * the origin and sequence number this bus hands out (nextMessage): a revocation is announced
 * exactly when it is committed. This bus PUBLISHes only its heartbeats.
 *
 * `subscribed` is true only after SUBSCRIBE was answered on a connection that is still up (or our
 * own messages come back again); the gateway trusts its credential cache only then. A refused
 * SUBSCRIBE (an ACL user without the channel, NOPERM) is retried with backoff and logged once.
 *
 * Pub/sub delivers at most once, so the bus looks for the moments it may have missed something
 * and then tells its listeners 'all' (clear everything):
 * - the subscriber connection dropped: `subscribed` is false at once, and 'all' comes when the
 *   SUBSCRIBE is answered again (the 'ready' event alone comes earlier);
 * - a gap in another bus's sequence numbers: a message of theirs never arrived (or their script
 *   failed before its PUBLISH, which also spends a seq: the cost is a needless clear);
 * - our own messages stopped coming back (Cluster moves its subscriber between nodes without
 *   telling us): onSubscriptionLost, then 'all' when they come back.
 * Every bus publishes an empty heartbeat each heartbeatMs, which is what makes gaps and silence
 * visible within about a heartbeat.
 */
export function createRedisInvalidationBus(options: RedisInvalidationBusOptions): RedisInvalidationBus {
  const { connection, channel, logger } = options;
  const heartbeatMs = options.heartbeatMs ?? 1000;
  const origin = randomUUID();
  const listeners: InvalidationListener[] = [];
  const subscriptionListeners: SubscriptionListener[] = [];
  const subscriber = connection.duplicate();
  let seq = 0;
  let closed = false;
  let subscribed = false;
  let subscribing = false;
  /** Counts connection drops, so a SUBSCRIBE answered on a connection that has since dropped confirms nothing. */
  let connectionEpoch = 0;
  /** Refused SUBSCRIBEs in a row (NOPERM, …): the backoff, and only the first is logged. */
  let refusals = 0;
  let nextAttemptAt = 0;
  let lastOwnSeq: number | undefined;
  let lastOwnEchoAt = Date.now();
  /** Our seqs whose PUBLISH (heartbeat or script) failed: their absence is no sign of a broken subscription. */
  const failedSeqs = new Set<number>();
  /** Script messages not settled yet, with what their echo carried if it came first. */
  const pending = new Map<number, Revoked[] | undefined>();
  const peers = new Map<string, { seq: number; seenAt: number }>();

  /** Calls each listener; one that throws is logged and does not stop the others. */
  function notify<T, E = undefined>(all: readonly ((value: T, extra?: E) => void)[], value: T, what: string, extra?: E): void {
    for (const listener of all) {
      try {
        listener(value, extra);
      } catch (error) {
        logger?.warn({ err: describe(error) }, `${what} failed`);
      }
    }
  }

  function tell(invalidation: Invalidation, publishedAt?: number): void {
    notify(listeners, invalidation, 'invalidation listener', publishedAt);
  }

  function setSubscribed(value: boolean): void {
    subscribed = value;
    notify(subscriptionListeners, value, 'subscription listener');
  }

  function lost(reason: string): void {
    if (closed || !subscribed) return;
    setSubscribed(false);
    logger?.warn(
      { event: 'invalidation_subscription_lost', reason },
      'revocation channel lost; every credential is read from Redis (no cache) until it returns',
    );
    try {
      options.onSubscriptionLost?.();
    } catch (error) {
      logger?.warn({ err: describe(error) }, 'onSubscriptionLost failed');
    }
  }

  function dropped(reason: string): void {
    connectionEpoch++;
    nextAttemptAt = 0; // a new connection subscribes at once
    lost(reason);
  }

  function recovered(reason: string): void {
    lastOwnSeq = undefined;
    lastOwnEchoAt = Date.now();
    peers.clear();
    refusals = 0;
    logger?.info({ reason }, 'invalidation subscription live; clearing caches');
    tell('all');
    setSubscribed(true);
  }

  function missed(reason: string): void {
    logger?.warn({ reason }, 'invalidation messages missed; clearing caches');
    tell('all');
  }

  async function subscribe(): Promise<void> {
    if (closed || subscribing || subscribed) return;
    subscribing = true;
    const epoch = connectionEpoch;
    try {
      await subscriber.subscribe(channel);
      // The answer confirms the subscription only if its connection has not dropped since.
      if (!closed && !subscribed && epoch === connectionEpoch) recovered('subscribed');
    } catch (error) {
      if (epoch !== connectionEpoch) return; // the connection dropped under it: not a refusal
      refusals++;
      nextAttemptAt = Date.now() + Math.min(heartbeatMs * 2 ** (refusals - 1), 8 * heartbeatMs);
      if (refusals === 1) {
        logger?.warn(
          { event: 'invalidation_subscribe_failed', err: describe(error) },
          'could not subscribe to the revocation channel; reading every credential from Redis (no cache) and retrying',
        );
      }
    } finally {
      subscribing = false;
      // A new connection that became ready meanwhile found this attempt running: its turn now.
      if (epoch !== connectionEpoch && !closed && subscriber.status === 'ready') void subscribe();
    }
  }

  function onOwnMessage(message: Message): void {
    lastOwnEchoAt = Date.now();
    if (pending.has(message.seq)) pending.set(message.seq, message.revoked);
    // A script whose caller got an error may have run after all: this replica applies it now.
    else if (failedSeqs.has(message.seq) && message.revoked.length > 0) tell(message.revoked);
    if (!subscribed) {
      recovered('own messages arrive again');
      lastOwnSeq = message.seq;
      return;
    }
    if (lastOwnSeq !== undefined && message.seq > lastOwnSeq + 1) {
      for (let s = lastOwnSeq + 1; s < message.seq; s++) {
        if (!failedSeqs.has(s) && !pending.has(s)) {
          missed('one of our own messages never came back');
          break;
        }
      }
    }
    if (lastOwnSeq === undefined || message.seq > lastOwnSeq) lastOwnSeq = message.seq;
    for (const s of failedSeqs) if (s <= lastOwnSeq) failedSeqs.delete(s);
  }

  function onPeerMessage(message: Message): void {
    if (message.revoked.length > 0) tell(message.revoked, message.at);
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
  subscriber.on('close', () => dropped('subscriber connection closed'));
  subscriber.on('end', () => dropped('subscriber connection ended'));
  // The store's connection logs connection trouble; here an error only means "not sure any more".
  subscriber.on('error', () => dropped('subscriber connection error'));

  async function heartbeat(): Promise<void> {
    const mySeq = ++seq;
    try {
      await withDeadline<unknown>(() => connection.publish(channel, `${messageHead(origin, mySeq)}[]}`), options.commandTimeoutMs, () => {
        throw new Error('publish timed out');
      });
    } catch {
      failedSeqs.add(mySeq);
    }
  }

  const ticker = setInterval(() => {
    if (closed) return;
    void heartbeat();
    const now = Date.now();
    if (subscribed && now - lastOwnEchoAt > 3 * heartbeatMs) lost('our own messages stopped coming back');
    if (!subscribed && subscriber.status === 'ready' && now >= nextAttemptAt) void subscribe();
    for (const [peerOrigin, peer] of peers) if (now - peer.seenAt > 30 * heartbeatMs) peers.delete(peerOrigin);
  }, heartbeatMs);
  ticker.unref();

  return {
    applyLocally(revoked) {
      if (revoked.length > 0) tell(revoked);
    },
    nextMessage() {
      const mySeq = ++seq;
      pending.set(mySeq, undefined);
      let settled = false;
      return {
        head: messageHead(origin, mySeq),
        settle(answered) {
          if (settled) return;
          settled = true;
          const echoed = pending.get(mySeq);
          pending.delete(mySeq);
          if (answered) return;
          if (echoed === undefined) failedSeqs.add(mySeq);
          else if (echoed.length > 0) tell(echoed); // it ran, and its caller will not apply it
        },
      };
    },
    onInvalidation(listener) {
      listeners.push(listener);
    },
    get subscribed() {
      return subscribed;
    },
    onSubscriptionChange(listener) {
      subscriptionListeners.push(listener);
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(ticker);
      listeners.length = 0;
      subscriptionListeners.length = 0;
      await quitRedisConnection(subscriber);
    },
  };
}
