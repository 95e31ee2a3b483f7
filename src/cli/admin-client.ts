// The admin API of a running gateway as the CLI reaches it: where, with which token, and how its answers print.
import { readFileSync } from 'node:fs';
import { CliError, oneLine } from './cli-error.js';

const REQUEST_TIMEOUT_MS = 30_000;

function readVersion(): string {
  try {
    // dist/cli/admin-client.js and src/cli/admin-client.ts both sit two levels below package.json.
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

export const VERSION = readVersion();

export type Target = { base: URL; token: string };

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

export function resolveTarget(env: NodeJS.ProcessEnv): Target {
  const token = nonEmpty(env.AUTHGATE_ADMIN_TOKEN);
  if (token === undefined) throw new CliError('AUTHGATE_ADMIN_TOKEN is not set; it must hold the admin API token of the gateway', 2);
  const raw = nonEmpty(env.AUTHGATE_ADMIN_URL) ?? `http://127.0.0.1:${nonEmpty(env.AUTHGATE_OPS_PORT) ?? '9090'}`;
  let base: URL;
  try {
    base = new URL(raw);
  } catch {
    throw new CliError('AUTHGATE_ADMIN_URL is not a valid URL', 2);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new CliError('AUTHGATE_ADMIN_URL must be an http: or https: URL', 2);
  if (base.username !== '' || base.password !== '') throw new CliError('AUTHGATE_ADMIN_URL must not carry credentials; the token goes in AUTHGATE_ADMIN_TOKEN', 2);
  // Keep any path prefix (a gateway behind a proxy) and resolve relative to it.
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  base.search = '';
  base.hash = '';
  return { base, token };
}

/** The target as it may be shown: never the token, never credentials (refused above anyway). */
function display(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

export type ApiResult = { status: number; body: unknown };

export async function call(target: Target, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<ApiResult> {
  const url = new URL(path, target.base);
  const headers: Record<string, string> = {
    authorization: `Bearer ${target.token}`,
    'user-agent': `authgate-cli/${VERSION}`,
    accept: 'application/json, application/problem+json',
  };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers,
      ...(body !== undefined && { body: JSON.stringify(body) }),
      redirect: 'manual', // never replay the token (or a password) to wherever a redirect points
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (error) {
    throw new CliError(`cannot reach the gateway at ${display(target.base)}: ${describeFetchError(error)}`, 1);
  }
  const text = await response.text().catch(() => '');
  let parsed: unknown;
  if (text !== '') {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
  }
  if (!response.ok) throw new CliError(formatHttpError(response, parsed), 1);
  return { status: response.status, body: parsed };
}

/**
 * Every page of a listing as one array: the admin API gives them 500 at a time, each page naming
 * the next by `nextCursor`. `search` is more of the query (`&email=…`), already encoded.
 */
export async function allPages(target: Target, path: string, field: string, search = ''): Promise<unknown[]> {
  const items: unknown[] = [];
  let cursor: string | null = null;
  do {
    const query: string = `?limit=500${search}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
    const page = (await call(target, 'GET', path + query)).body as Record<string, unknown> | undefined;
    const listed = page?.[field];
    items.push(...(Array.isArray(listed) ? (listed as unknown[]) : []));
    cursor = typeof page?.nextCursor === 'string' ? page.nextCursor : null;
  } while (cursor !== null);
  return items;
}

function describeFetchError(error: unknown): string {
  if (error instanceof Error) {
    if (error.name === 'TimeoutError') return `no answer within ${REQUEST_TIMEOUT_MS / 1000}s`;
    // undici hides the reason (ECONNREFUSED, ENOTFOUND, ...) in `cause`.
    const cause = (error as { cause?: unknown }).cause;
    if (cause instanceof Error) {
      const code = (cause as NodeJS.ErrnoException).code;
      return code !== undefined ? `${code}` : cause.message;
    }
    return error.message;
  }
  return String(error);
}

function formatHttpError(response: Response, problem: unknown): string {
  let title = response.statusText || 'HTTP error';
  let detail: string | undefined;
  if (typeof problem === 'object' && problem !== null) {
    const p = problem as { title?: unknown; detail?: unknown };
    if (typeof p.title === 'string' && p.title !== '') title = p.title;
    if (typeof p.detail === 'string' && p.detail !== '') detail = p.detail;
  }
  if (response.status >= 300 && response.status < 400) detail ??= 'the admin URL redirects; point AUTHGATE_ADMIN_URL at the ops port itself';
  return `${response.status} ${oneLine(title)}${detail !== undefined ? `: ${oneLine(detail)}` : ''}`;
}

export function printJson(value: unknown): void {
  if (value === undefined) return; // an empty or non-JSON success body: nothing to show
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** An organization's admin path, and below it. */
export function orgPath(id: string, below = ''): string {
  return `admin/organizations/${encodeURIComponent(id)}${below}`;
}
