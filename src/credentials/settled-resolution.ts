import type { IncomingMessage } from 'node:http';
import type { Resolution } from './resolver.js';

/**
 * A credential the fast lane (proxy/fast-path.ts) already resolved through the store, handed to
 * the framework's authenticate stage with the request it came with, so that a request the lane
 * leaves to the framework after a cache miss (a refusal, an assertion to sign, a store that did
 * not answer) costs one store read, not two. Kept per request object and taken once: nothing
 * outlives the request, and nothing crosses to another.
 */
const settled = new WeakMap<IncomingMessage, Promise<Resolution>>();

export function keepSettledResolution(request: IncomingMessage, resolution: Promise<Resolution>): void {
  settled.set(request, resolution);
}

/**
 * Whether the lane admitted this request and read its credential: it arrived before any shutdown
 * began, so the framework serves it as the in-flight request it is (public-server.ts).
 */
export function hasSettledResolution(request: IncomingMessage): boolean {
  return settled.has(request);
}

/** The lane's answer for this request (settled, or rejected as the store rejected it), once. */
export function takeSettledResolution(request: IncomingMessage): Promise<Resolution> | undefined {
  const found = settled.get(request);
  if (found !== undefined) settled.delete(request);
  return found;
}
