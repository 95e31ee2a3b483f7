/**
 * `authgate routes check`'s look at each trusted issuer (issue 49): can its discovery document
 * (or its jwksUri) be fetched from here, now, or its introspection endpoint be reached? Only ever a warning: a check may run offline (CI, a
 * laptop), and the gateway itself fetches keys in the background and answers 503 until they come.
 */
import type { CompiledIssuer } from './types.js';

const PROBE_TIMEOUT_MS = 3000;

/** Why the issuer's keys could not be reached from here, or undefined when they could. */
export async function probeIssuer(issuer: CompiledIssuer): Promise<string | undefined> {
  if (issuer.introspection !== undefined) {
    // An introspection endpoint is only reached here, never called with the client's secret: any answer (a 400, a 401) is one.
    const url = issuer.introspection.url;
    return problemOf(url, () => fetch(url, { method: 'POST', redirect: 'manual', signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) }), () => true);
  }
  const url = issuer.jwksUri ?? `${issuer.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  return problemOf(url, () => fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(PROBE_TIMEOUT_MS), headers: { accept: 'application/json' } }), (status) => status === 200);
}

async function problemOf(url: string, ask: () => Promise<Response>, good: (status: number) => boolean): Promise<string | undefined> {
  try {
    const response = await ask();
    await response.body?.cancel();
    return good(response.status) ? undefined : `${url} answered ${response.status}`;
  } catch (error) {
    // fetch's own error is a bare TypeError: the system's code is on its cause (or the cause's first error).
    const cause = (error as { cause?: { code?: string; errors?: { code?: string }[] } } | undefined)?.cause;
    const code = cause?.code ?? cause?.errors?.[0]?.code ?? (error instanceof Error ? error.name : 'error');
    return `${url} could not be reached (${code})`;
  }
}
