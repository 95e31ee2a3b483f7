// The public API as the console calls it: the same routes and answers the README documents, with
// the login token held in this module's memory only (never a cookie, localStorage or the URL: a
// reload signs out, and no other page can send it, so there is no CSRF surface).

export type Problem = Readonly<{ status: number; code?: number; title: string; detail?: string; retryAfterSeconds?: number }>;

/** A refused call, with the problem the API answered (or a network failure as status 0). */
export class ApiError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail ?? problem.title);
    this.name = 'ApiError';
  }
}

let token: string | undefined;
const sessionEndedListeners: ((message: string) => void)[] = [];

export const signedIn = () => token !== undefined;

/** Told when a call with the token is refused with 401: the session ended (expired, ended elsewhere). */
export function onSessionEnded(listener: (message: string) => void): void {
  sessionEndedListeners.push(listener);
}

export async function signIn(email: string, password: string): Promise<void> {
  const answer = await call<{ token: string }>('POST', '/auth/login', { email, password }, false);
  token = answer.token;
}

/** Ends this session on the server (best effort), then forgets the token. */
export async function signOut(): Promise<void> {
  try {
    if (token !== undefined) await call('POST', '/auth/logout', undefined, true);
  } finally {
    token = undefined;
  }
}

/**
 * POST /auth/password: every login session of the organization ends, this one too, and the
 * answer's token (a new session's) replaces it, so the console keeps working signed in.
 */
export async function changePassword(currentPassword: string, newPassword: string): Promise<void> {
  const answer = await call<{ token: string }>('POST', '/auth/password', { currentPassword, newPassword });
  token = answer.token;
}

export function forgetToken(): void {
  token = undefined;
}

export async function call<T = unknown>(method: string, path: string, body?: unknown, authenticated = true): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (authenticated) {
    if (token === undefined) throw new ApiError({ status: 401, title: 'Signed out', detail: 'Sign in first.' });
    headers['authorization'] = `Bearer ${token}`;
  }
  let response: Response;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? null : JSON.stringify(body), credentials: 'omit', cache: 'no-store', referrerPolicy: 'no-referrer' });
  } catch {
    throw new ApiError({ status: 0, title: 'Network error', detail: 'The gateway could not be reached; check the connection and retry.' });
  }
  if (response.ok) return (response.status === 204 ? undefined : await response.json()) as T;
  const problem = await problemOf(response);
  if (response.status === 401 && authenticated && token !== undefined) {
    token = undefined;
    for (const listener of sessionEndedListeners) listener('Your session has ended (it expired or was signed out elsewhere). Sign in again.');
  }
  throw new ApiError(problem);
}

async function problemOf(response: Response): Promise<Problem> {
  const retryAfter = Number(response.headers.get('retry-after'));
  const base = { status: response.status, title: response.statusText || `HTTP ${response.status}`, ...(Number.isFinite(retryAfter) && retryAfter > 0 && { retryAfterSeconds: retryAfter }) };
  try {
    const body = (await response.json()) as { code?: unknown; title?: unknown; detail?: unknown };
    return {
      ...base,
      ...(typeof body.code === 'number' && { code: body.code }),
      ...(typeof body.title === 'string' && { title: body.title }),
      ...(typeof body.detail === 'string' && { detail: body.detail }),
    };
  } catch {
    return base;
  }
}

/** What a person should read about a refusal: the problem's detail, and when to come back. */
export function describe(error: unknown): string {
  if (!(error instanceof ApiError)) return 'Something went wrong in the console; reload the page.';
  const { status, title, detail, retryAfterSeconds } = error.problem;
  const text = detail ?? title;
  if (status === 429) return `${text} Try again in ${retryAfterSeconds ?? 1} s.`;
  if (status === 503) return `${text} The service is busy or unavailable; retry in ${retryAfterSeconds ?? 1} s.`;
  if (status === 502 || status === 504) return `${text} The service behind the gateway did not answer; retry in a moment.`;
  return text;
}

/** Worth trying again as it is: the gateway or what it depends on was unavailable, or the network failed. */
export const isRetryable = (error: unknown) => error instanceof ApiError && [0, 502, 503, 504].includes(error.problem.status);
