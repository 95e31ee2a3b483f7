// The public API as the console calls it: the same routes and answers the README documents, with
// the login token held in this module's memory only (never a cookie, localStorage or the URL: a
// reload signs out, and no other page can send it, so there is no CSRF surface).

export type Problem = Readonly<{ status: number; code?: number; title: string; detail?: string; retryAfterSeconds?: number }>;

/** A refused call, with the problem the API answered (or a network failure as status 0). */
export class ApiError extends Error {
  constructor(
    readonly problem: Problem,
    /** The problem's whole body, with its extension members (a 1116's mfaToken, say). */
    readonly body: Readonly<Record<string, unknown>> = {},
  ) {
    super(problem.detail ?? problem.title);
    this.name = 'ApiError';
  }
}

/** POST /auth/login's 403 (1116) for an organization with a second factor: what finishes the sign-in. */
export type MfaChallenge = Readonly<{ mfaToken: string; methods: readonly string[]; expiresIn: number; passkeyOptions?: unknown }>;

/** One of the proofs POST /auth/login/mfa takes with the mfaToken. */
export type SecondFactor = Readonly<{ code: string } | { recoveryCode: string } | { passkey: unknown }>;

const MFA_REQUIRED = 1116;

let token: string | undefined;
const sessionEndedListeners: ((message: string) => void)[] = [];

export const signedIn = () => token !== undefined;

/** Told when a call with the token is refused with 401: the session ended (expired, ended elsewhere). */
export function onSessionEnded(listener: (message: string) => void): void {
  sessionEndedListeners.push(listener);
}

/**
 * POST /auth/login: signed in (undefined), or, for an organization with a second factor, the
 * challenge its second step answers (then no token exists yet: none is half signed in).
 */
export async function signIn(email: string, password: string): Promise<MfaChallenge | undefined> {
  try {
    const answer = await call<{ token: string }>('POST', '/auth/login', { email, password }, false);
    token = answer.token;
    return undefined;
  } catch (error) {
    const challenge = error instanceof ApiError && error.problem.code === MFA_REQUIRED ? challengeOf(error.body) : undefined;
    if (challenge === undefined) throw error;
    return challenge;
  }
}

function challengeOf(body: Readonly<Record<string, unknown>>): MfaChallenge | undefined {
  const { mfaToken, methods, expiresIn, passkeyOptions } = body;
  if (typeof mfaToken !== 'string' || !Array.isArray(methods)) return undefined;
  return {
    mfaToken,
    methods: methods.filter((m): m is string => typeof m === 'string'),
    expiresIn: typeof expiresIn === 'number' ? expiresIn : 300,
    ...(passkeyOptions !== undefined && passkeyOptions !== null && { passkeyOptions }),
  };
}

/** POST /auth/login/mfa: the second step, with the mfaToken and one proof. */
export async function finishSignIn(mfaToken: string, proof: SecondFactor): Promise<void> {
  const answer = await call<{ token: string }>('POST', '/auth/login/mfa', { mfaToken, ...proof }, false);
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

/** POST /auth/invitations/accept: the member is created and signed in with the answer's token. */
export async function acceptInvitation(invitationToken: string, password: string): Promise<void> {
  const answer = await call<{ token: string }>('POST', '/auth/invitations/accept', { token: invitationToken, password }, false);
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
  const [problem, problemBody] = await problemOf(response);
  if (response.status === 401 && authenticated && token !== undefined) {
    token = undefined;
    for (const listener of sessionEndedListeners) listener('Your session has ended (it expired or was signed out elsewhere). Sign in again.');
  }
  throw new ApiError(problem, problemBody);
}

async function problemOf(response: Response): Promise<[Problem, Record<string, unknown>]> {
  const retryAfter = Number(response.headers.get('retry-after'));
  const base = { status: response.status, title: response.statusText || `HTTP ${response.status}`, ...(Number.isFinite(retryAfter) && retryAfter > 0 && { retryAfterSeconds: retryAfter }) };
  try {
    const parsed: unknown = await response.json();
    const body = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Record<string, unknown>;
    const problem = {
      ...base,
      ...(typeof body['code'] === 'number' && { code: body['code'] }),
      ...(typeof body['title'] === 'string' && { title: body['title'] }),
      ...(typeof body['detail'] === 'string' && { detail: body['detail'] }),
    };
    return [problem, body];
  } catch {
    return [base, {}];
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
