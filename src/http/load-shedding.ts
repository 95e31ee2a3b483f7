// Load shedding: a saturated event loop refuses new requests at once (503/1509) instead of queueing them.
import underPressure from '@fastify/under-pressure';
import type { FastifyInstance } from 'fastify';
import { monitorEventLoopDelay, performance, type EventLoopUtilization } from 'node:perf_hooks';
import { Problem } from '../problems.js';

export type SheddingSettings = Readonly<{ maxEventLoopDelayMs: number; maxEventLoopUtilization: number }>;

/** The one error shed requests get: a 503 problem with Retry-After, rendered like all others. */
class Overloaded extends Problem {
  constructor() {
    super('overloaded', 'The gateway is overloaded; try again shortly.', 'overloaded', 1);
  }
}

const SAMPLE_INTERVAL_MS = 250;
const PROBE_RESOLUTION_MS = 10;

export type LoopMonitor = Readonly<{
  /** Judges the window since the last call; true while the gateway should shed. */
  sample(): boolean;
  /** Forgets every window so far (the server has just started listening). */
  restart(): void;
  stop(): void;
}>;

/**
 * Whether the event loop is saturated, judged once per window (SAMPLE_INTERVAL_MS): a window is
 * over the delay limit when the mean delay of a 10 ms probe recorded in it is, and over the
 * utilization limit when the loop was busy for more than that share of it. The gateway sheds
 * only when the last two windows were over the same limit.
 *
 * Why two: one stall, however long (start-up, a long GC, a big synchronous job), fills one
 * window; the next begins as soon as the loop is free again and is clean. Saturation fills every
 * window. under-pressure's own event-loop-delay check shed an idle gateway after a stall: a
 * window in which the loop was blocked from its start has no probe measurement at all, a NaN
 * mean that it reads as an infinite delay, and it resets its histogram each window, which also
 * drops the stall's own measurement or moves it into the next window. Here the probe is never
 * reset (each window's mean is the difference of running totals, so every delay is counted once),
 * and a window without a measurement says nothing: it neither starts nor ends a run.
 */
export function createLoopMonitor(settings: SheddingSettings): LoopMonitor {
  const probe = monitorEventLoopDelay({ resolution: PROBE_RESOLUTION_MS });
  probe.enable();
  let count = 0;
  let totalNs = 0;
  let elu: EventLoopUtilization = performance.eventLoopUtilization();
  let delayRun = 0;
  let busyRun = 0;
  // The histogram's mean is NaN until its first measurement.
  const totalOf = (n: number) => (n === 0 ? 0 : probe.mean * n);
  const restart = () => {
    count = probe.count;
    totalNs = totalOf(count);
    elu = performance.eventLoopUtilization();
    delayRun = 0;
    busyRun = 0;
  };
  restart();
  return {
    sample() {
      const nowCount = probe.count;
      const nowTotalNs = totalOf(nowCount);
      const measured = nowCount - count;
      if (settings.maxEventLoopDelayMs > 0 && measured > 0) {
        const meanDelayMs = (nowTotalNs - totalNs) / measured / 1e6 - PROBE_RESOLUTION_MS;
        delayRun = meanDelayMs > settings.maxEventLoopDelayMs ? delayRun + 1 : 0;
      }
      count = nowCount;
      totalNs = nowTotalNs;
      const nowElu = performance.eventLoopUtilization();
      if (settings.maxEventLoopUtilization > 0) {
        busyRun = performance.eventLoopUtilization(nowElu, elu).utilization > settings.maxEventLoopUtilization ? busyRun + 1 : 0;
      }
      elu = nowElu;
      return delayRun >= 2 || busyRun >= 2;
    },
    restart,
    stop: () => probe.disable(),
  };
}

/**
 * When the event loop is saturated, refuse new work at once with 503 instead of letting every
 * request's latency grow without bound. under-pressure gives the onRequest hook, which only reads
 * a boolean; the judgement is createLoopMonitor's, taken as its health check on an unref'd timer.
 * Nothing is installed when both limits are 0.
 */
export async function registerLoadShedding(app: FastifyInstance, settings: SheddingSettings): Promise<void> {
  if (settings.maxEventLoopDelayMs === 0 && settings.maxEventLoopUtilization === 0) return;
  const monitor = createLoopMonitor(settings);
  // A just-started gateway never sheds for what the loop did before it was listening.
  app.addHook('onListen', (done) => {
    monitor.restart();
    done();
  });
  app.addHook('onClose', (_instance, done) => {
    monitor.stop();
    done();
  });
  await app.register(underPressure, {
    healthCheck: async () => !monitor.sample(),
    healthCheckInterval: SAMPLE_INTERVAL_MS,
    customError: Overloaded,
    exposeStatusRoute: false,
  });
}
