// AUTHGATE_REDIS_TLS and its files (config/load.ts reads the rest of the Redis settings).
import type { RedisTlsConfig } from './config.js';
import type { Loaded } from './load.js';
import { parseCertificates, readText } from './pem.js';
import type { SettingName } from './settings.js';

/** What config/load.ts lends a part of the loading: the table's values, and where problems go. */
export type SettingsReader = Readonly<{
  setting: <N extends SettingName>(name: N) => Loaded<N>;
  given: (name: SettingName) => boolean;
  fail: (name: SettingName, problem: string) => undefined;
  /** The value as written (trimmed; undefined when blank), valid or not: never a parsed one. */
  raw: (name: SettingName) => string | undefined;
}>;

/**
 * One switch for every connection of the topology. A standalone URL already says it with its
 * scheme, so a setting that contradicts the scheme is refused rather than one of them ignored.
 * There is no way to turn certificate verification off: a private CA is trusted with the CA file.
 */
export function readRedisTls(url: string | undefined, { setting, given, fail }: SettingsReader): RedisTlsConfig | undefined {
  const mode = setting('AUTHGATE_REDIS_TLS');
  const secureUrl = url !== undefined && url.startsWith('rediss://');
  if (url !== undefined && mode === 'on' && !secureUrl) fail('AUTHGATE_REDIS_TLS', 'is on but AUTHGATE_REDIS_URL is redis://: use rediss://');
  if (secureUrl && mode === 'off') fail('AUTHGATE_REDIS_TLS', 'is off but AUTHGATE_REDIS_URL is rediss://');
  // Unset, the URL's scheme decides; a refused value is off (the refusal stops the start anyway).
  const on = mode === 'on' || (!given('AUTHGATE_REDIS_TLS') && secureUrl);
  if (!on) {
    for (const name of ['AUTHGATE_REDIS_TLS_CA_FILE', 'AUTHGATE_REDIS_TLS_SERVER_NAME'] as const) {
      if (given(name)) fail(name, 'needs Redis TLS: AUTHGATE_REDIS_TLS=on or a rediss:// AUTHGATE_REDIS_URL');
    }
    return undefined;
  }
  const serverName = setting('AUTHGATE_REDIS_TLS_SERVER_NAME');
  const caFile = setting('AUTHGATE_REDIS_TLS_CA_FILE');
  let ca: string | undefined;
  if (caFile !== undefined) {
    // Parsed now (config/pem.ts): a corrupt bundle would otherwise fail every handshake, unnamed.
    ca = readText(caFile);
    const parsed = ca === undefined ? undefined : parseCertificates(ca);
    if (parsed === undefined) fail('AUTHGATE_REDIS_TLS_CA_FILE', 'cannot be read');
    else if (!parsed.ok) {
      ca = undefined;
      fail('AUTHGATE_REDIS_TLS_CA_FILE', parsed.problem);
    }
  }
  return { ...(ca === undefined ? {} : { ca }), ...(serverName === undefined ? {} : { serverName }) };
}
