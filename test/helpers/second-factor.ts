/**
 * What the second factor's tests share (issue 32): the API called as JSON with a login token, a
 * problem answer checked by status and code, a clock the test moves by whole TOTP steps (so no
 * test waits 30 s on the real one), and a TOTP code computed from a returned secret.
 */
import * as OTPAuth from 'otpauth';
import type { Test } from 'tap';
import { send, UA, type Response, type StartedGateway } from './gateway.js';

const JSON_HEADERS = { ...UA, 'content-type': 'application/json' };

/**
 * The public port called with a JSON body (if any) and a bearer (if any); from `address` (as
 * X-Forwarded-For, for a gateway with AUTHGATE_TRUST_PROXY) when given.
 */
export function call(gw: StartedGateway, method: string, path: string, body?: unknown, token?: string, address?: string): Promise<Response> {
  const text = body === undefined ? undefined : JSON.stringify(body);
  // Content-Length always: node frames a DELETE's body by nothing otherwise.
  return send(`${gw.publicUrl}${path}`, {
    method,
    headers: {
      ...(text === undefined ? UA : { ...JSON_HEADERS, 'content-length': String(Buffer.byteLength(text)) }),
      ...(token !== undefined && { authorization: `Bearer ${token}` }),
      ...(address !== undefined && { 'x-forwarded-for': address }),
    },
    ...(text !== undefined && { body: text }),
  });
}

/** The answer is a problem with this status and code. */
export function problem(t: Test, res: Response, status: number, code: number, what: string): void {
  t.equal(res.status, status, `${what}: ${status}`);
  t.equal(res.status === status ? (res.json() as { code?: number }).code : undefined, code, `${what}: code ${code} (${res.body.slice(0, 200)})`);
}

export type Clock = { now: () => number; step: () => void };

/** The gateway's clock (deps.now): starts a second into a time step, so a test (a few seconds) never crosses one by itself. */
export function clock(): Clock {
  let offset = Math.ceil(Date.now() / 30_000) * 30_000 + 1000 - Date.now();
  return { now: () => Date.now() + offset, step: () => { offset += 30_000; } };
}

/** The 6-digit code of `secret` (base32) at `timestamp`, computed by otpauth, not by the gateway's code. */
export const codeAt = (secret: string, timestamp: number): string => OTPAuth.TOTP.generate({ secret: OTPAuth.Secret.fromBase32(secret), timestamp });
