import underPressure from '@fastify/under-pressure';
import type { FastifyInstance } from 'fastify';
import { Problem } from '../problems.js';

export type SheddingSettings = Readonly<{ maxEventLoopDelayMs: number; maxEventLoopUtilization: number }>;

/** The one error shed requests get: a 503 problem with Retry-After, rendered like all others. */
class Overloaded extends Problem {
  constructor() {
    super('overloaded', 'The gateway is overloaded; try again shortly.', 'overloaded', 1);
  }
}

/**
 * When the event loop is saturated, refuse new work at once with 503 instead of letting every
 * request's latency grow without bound. under-pressure samples on an unref'd timer; its
 * onRequest hook only compares numbers, and is not installed at all when both limits are 0.
 */
export async function registerLoadShedding(app: FastifyInstance, settings: SheddingSettings): Promise<void> {
  if (settings.maxEventLoopDelayMs === 0 && settings.maxEventLoopUtilization === 0) return;
  await app.register(underPressure, {
    maxEventLoopDelay: settings.maxEventLoopDelayMs,
    maxEventLoopUtilization: settings.maxEventLoopUtilization,
    eventLoopUtilizationMode: 'interval',
    sampleInterval: 250,
    customError: Overloaded,
    exposeStatusRoute: false,
  });
}
