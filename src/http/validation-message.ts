import type { FastifySchemaValidationError } from 'fastify/types/schema.js';
import { SCOPE_NAME_PATTERN } from '../authz/scopes.js';

/**
 * What each pattern of the route schemas (routes/schemas.ts) expects, in words: a value that does
 * not match is refused with "<where> must be <words>", never with the regular expression itself,
 * which tells a client nothing. test/http/pattern-errors.test.ts checks that every pattern in both
 * OpenAPI documents has its words here; one that has none still never shows its regex.
 */
const RATE_LIMIT = '^[1-9][0-9]{0,9}/[1-9][0-9]{0,5}[smh]$';
const RATE_LIMIT_WORDS = 'a number of requests and a window, like 100/1m or 600/60s (the window in s, m or h)';

export const PATTERN_WORDS: ReadonlyMap<string, string> = new Map([
  ['^\\s*[^@\\s]+@[^@\\s]+\\s*$', 'an e-mail address, like owner@example.com'],
  ['^[A-Za-z0-9_-]+$', 'an id: letters, digits, _ and -'],
  ['^[A-Za-z0-9._-]+$', 'an id: letters, digits, ., _ and -'],
  [RATE_LIMIT, RATE_LIMIT_WORDS],
  [`${RATE_LIMIT}|^off$`, `${RATE_LIMIT_WORDS}, or off`],
  ['^([1-9][0-9]?|[1-4][0-9]{2}|500)$', 'a whole number from 1 to 500'],
  ['^[0-9]{1,20}-[0-9]{1,20}$', 'the nextCursor of the previous page'],
  ['^[a-z_.]{1,64}$', 'an event type, like api_key.created'],
  ['^mem_[A-Za-z0-9_-]{1,64}$', 'a member id, mem_ and letters, digits, _ and - (GET /auth/members lists them)'],
  ['\\S', 'some text, not only spaces'],
  ['^[A-Za-z0-9_-]+={0,2}$', 'base64url: letters, digits, _ and -'],
  [SCOPE_NAME_PATTERN, 'a scope name, resource:action in lower case, like invoices:read (GET /auth/scopes lists them)'],
]);

const FALLBACK = 'in the expected format (see the interface in the README)';

/**
 * Fastify's schemaErrorFormatter for both ports: fastify's own wording ("body/name must NOT have
 * fewer than 1 characters") except for patterns, said in words. In a union (a rate limit or null),
 * the pattern's words stand for the whole value, without the alternatives' noise.
 */
export function describeValidation(errors: FastifySchemaValidationError[], dataVar: string): Error {
  const withPattern = new Set(errors.filter((e) => e.keyword === 'pattern').map((e) => e.instancePath));
  const parts: string[] = [];
  for (const error of errors) {
    if (error.keyword === 'anyOf' || error.keyword === 'oneOf') continue;
    const where = `${dataVar}${error.instancePath}`;
    let text: string;
    if (error.keyword === 'pattern') {
      const pattern = (error.params as { pattern?: unknown }).pattern;
      text = `${where} must be ${(typeof pattern === 'string' && PATTERN_WORDS.get(pattern)) || FALLBACK}`;
    } else if (withPattern.has(error.instancePath)) {
      continue;
    } else {
      text = `${where} ${error.message ?? 'is not acceptable'}`;
    }
    if (!parts.includes(text)) parts.push(text);
  }
  return new Error(parts.join(', ') || `${dataVar} is not acceptable`);
}
