/**
 * AUTHGATE_REDIS_WAIT_REPLICAS (issue 26, "Durability"): a write that creates or changes a
 * credential is answered only once that many replicas of the master that took it acknowledged
 * it (Redis WAIT), so a key whose secret was shown once survives the master's crash and the
 * failover after it. Redis replicates asynchronously; WAIT does not make it synchronous (a
 * replica that acknowledged may still lose the write if it is not the one promoted), but with
 * one replica, the one Sentinel or Cluster promotes, it closes the common window.
 *
 * WAIT counts the writes sent on the connection it is sent on, on the node it is sent to. So it
 * goes on the very connection that carried the write: ioredis keeps one connection to a
 * standalone master (or the master Sentinel names), and one per Cluster node, where a pipeline
 * holding a read of one of the write's keys is sent to the node that serves that key's slot. A
 * connection closed between the write and WAIT's answer (a failover) may leave WAIT counting on
 * another connection that never carried the write: that is not an acknowledgement either.
 */
import { Cluster, type Redis } from 'ioredis';
import { WriteNotReplicated } from '../durability.js';
import type { Client } from './connection.js';

export type ReplicationWait = Readonly<{
  /** How many replicas must acknowledge; 0: no WAIT at all. */
  replicas: number;
  /**
   * Runs the write, then waits until `replicas` replicas acknowledged it on the node of each
   * of `keys` (a key the write wrote: one per Cluster slot it touched). Throws
   * WriteNotReplicated when fewer did within the time: the write may have been made.
   */
  durably<T>(keys: readonly string[], write: () => Promise<T>): Promise<T>;
}>;

/**
 * `timeoutMs` is WAIT's own timeout on the server; it must end before the client gives up on
 * the command (commandTimeoutMs), so that a missing replica is answered as such (503 1511)
 * rather than as a store that did not answer (503 1503).
 */
export function replicationWait(client: Client, replicas: number, timeoutMs: number): ReplicationWait {
  if (replicas <= 0) return { replicas: 0, durably: (_keys, write) => write() };
  let closes = 0;
  const watch = (connection: Redis) => connection.on('close', () => closes++);
  if (client instanceof Cluster) {
    client.on('+node', watch);
    for (const node of client.nodes()) watch(node);
  } else {
    watch(client);
  }
  const timeout = Math.max(1, Math.floor(timeoutMs));

  /** WAIT on the node serving `key`, on the connection the write took; the replicas that acknowledged. */
  async function waitOn(key: string): Promise<number> {
    if (!(client instanceof Cluster)) return numberOf(await client.wait(replicas, timeout));
    // A pipeline goes to the one node serving its keys' slot (scaleReads is 'master').
    const replies = await client.pipeline().exists(key).wait(replicas, timeout).exec();
    const [error, acknowledged] = replies?.[1] ?? [new Error('no reply to WAIT'), undefined];
    if (error !== null) throw error;
    return numberOf(acknowledged);
  }

  return {
    replicas,
    async durably(keys, write) {
      const before = closes;
      const result = await write();
      // One WAIT per node; on one connection, one WAIT covers every write sent on it before.
      const targets = client instanceof Cluster ? [...new Set(keys)] : keys.slice(0, 1);
      const acknowledged = await Promise.all(targets.map(waitOn));
      const fewest = Math.min(...acknowledged);
      if (closes !== before) throw new WriteNotReplicated(0, replicas);
      if (fewest < replicas) throw new WriteNotReplicated(fewest, replicas);
      return result;
    },
  };
}

function numberOf(reply: unknown): number {
  if (typeof reply !== 'number') throw new Error('WAIT answered something else than a number');
  return reply;
}
