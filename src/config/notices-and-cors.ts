// Two settings groups read apart from config/load.ts: the security notices' webhook and the CORS
// origins, each checked as a whole (a secret that needs its URL, `*` that must stand alone).
import type { Config } from './config.js';
import type { SettingsReader } from './redis-tls.js';
import { isShippedSecret, weakSecretProblem } from './shipped-secrets.js';

/**
 * The notices' webhook: the secret comes with the URL and never without it, and is never a value
 * the repository shows (in development too: nothing is generated for it, and a receiver that
 * verifies with a public key verifies nothing).
 */
export function readNotices({ setting, given, fail }: SettingsReader, production: boolean): Config['notices'] {
  const webhookUrl = setting('AUTHGATE_NOTIFY_WEBHOOK_URL');
  const secret = setting('AUTHGATE_NOTIFY_WEBHOOK_SECRET');
  // A value already refused for its form is not named twice.
  if (webhookUrl === undefined) {
    if (secret !== undefined && !given('AUTHGATE_NOTIFY_WEBHOOK_URL')) fail('AUTHGATE_NOTIFY_WEBHOOK_SECRET', 'is set but AUTHGATE_NOTIFY_WEBHOOK_URL is not');
    return undefined;
  }
  if (secret === undefined) {
    if (!given('AUTHGATE_NOTIFY_WEBHOOK_SECRET')) fail('AUTHGATE_NOTIFY_WEBHOOK_SECRET', 'is required when AUTHGATE_NOTIFY_WEBHOOK_URL is set');
    return undefined;
  }
  if (isShippedSecret(secret)) {
    fail('AUTHGATE_NOTIFY_WEBHOOK_SECRET', 'is a value shipped in the repository\'s examples or docs, public to anyone: set a secret of your own');
    return undefined;
  }
  const weak = production ? weakSecretProblem(secret) : undefined;
  if (weak !== undefined) fail('AUTHGATE_NOTIFY_WEBHOOK_SECRET', weak);
  return { webhookUrl, secret };
}

/** Each an origin as browsers send it (scheme, host, optional port; no path), or `*` alone. */
export function readCorsOrigins({ setting, fail }: SettingsReader): readonly string[] | '*' {
  const listed = setting('AUTHGATE_CORS_ORIGINS') ?? [];
  if (listed.includes('*')) {
    if (listed.length > 1) fail('AUTHGATE_CORS_ORIGINS', 'must be `*` alone or a list of origins');
    return '*';
  }
  const origins: string[] = [];
  for (const entry of listed) {
    const origin = /^https?:\/\/[^/?#@\s]+$/i.test(entry) && URL.canParse(entry) ? new URL(entry).origin : undefined;
    if (origin === undefined || origin === 'null') fail('AUTHGATE_CORS_ORIGINS', 'must each be an origin such as https://app.example.com (scheme and host, no path)');
    else origins.push(origin);
  }
  return origins;
}

