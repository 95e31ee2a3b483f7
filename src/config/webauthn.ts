// The passkeys' relying party (issue 32), read apart from config/load.ts: the RP ID and the
// origins are checked together (each origin must be on the RP ID's domain, as browsers require).
import type { Config } from './config.js';
import type { SettingsReader } from './redis-tls.js';

/**
 * Outside production both have defaults (localhost and http://localhost:<AUTHGATE_PORT>); in
 * production passkeys are offered only when both are set (undefined otherwise: registration
 * answers 409, code 1231), since a wrong RP ID would make every registered passkey useless later.
 */
export function readWebauthn({ setting, given, fail }: SettingsReader, production: boolean, port: number): Config['webauthn'] {
  const rpId = setting('AUTHGATE_WEBAUTHN_RP_ID') ?? (production ? undefined : 'localhost');
  const listed = setting('AUTHGATE_WEBAUTHN_ORIGINS') ?? (production ? undefined : [`http://localhost:${port}`]);
  if (rpId === undefined || listed === undefined) {
    if (given('AUTHGATE_WEBAUTHN_RP_ID') !== given('AUTHGATE_WEBAUTHN_ORIGINS') && production) {
      fail(given('AUTHGATE_WEBAUTHN_RP_ID') ? 'AUTHGATE_WEBAUTHN_ORIGINS' : 'AUTHGATE_WEBAUTHN_RP_ID', 'is required with the other WebAuthn setting: passkeys need both');
    }
    return undefined;
  }
  const origins: string[] = [];
  for (const entry of listed) {
    const origin = /^https?:\/\/[^/?#@\s]+$/i.test(entry) && URL.canParse(entry) ? new URL(entry) : undefined;
    if (origin === undefined || origin.origin === 'null') {
      fail('AUTHGATE_WEBAUTHN_ORIGINS', 'must each be an origin such as https://console.example.com (scheme and host, no path)');
      continue;
    }
    const host = origin.hostname.toLowerCase();
    // A browser refuses an RP ID that is not the origin's host or a registrable suffix of it.
    if (host !== rpId.toLowerCase() && !host.endsWith(`.${rpId.toLowerCase()}`)) {
      fail('AUTHGATE_WEBAUTHN_ORIGINS', 'must each be on the domain of AUTHGATE_WEBAUTHN_RP_ID (its host, or a subdomain of it)');
      continue;
    }
    origins.push(origin.origin);
  }
  return { rpId: rpId.toLowerCase(), origins };
}
