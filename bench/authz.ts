/**
 * Issue 30's scenarios (nginx auth_request → authgate's authz listener): whether the build under
 * test has that listener. A build without it ignores AUTHGATE_AUTHZ_PORT, so the scenarios are
 * skipped with one line rather than failing their check.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export function authzUnsupported(main: string): string | undefined {
  let settings = '';
  try {
    settings = readFileSync(join(dirname(main), 'config', 'settings.js'), 'utf8');
  } catch {
    // an unusual build layout: treated as without it
  }
  if (settings.includes('AUTHGATE_AUTHZ_PORT')) return undefined;
  return `the build under test (${main}) has no authz listener (AUTHGATE_AUTHZ_PORT, issue 30)`;
}
