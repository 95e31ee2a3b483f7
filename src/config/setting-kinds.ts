/**
 * The kinds of setting in config/settings.ts: for each, how a value is parsed and range-checked
 * (config/load.ts) and how its accepted range reads (README, `authgate config`). Keeping the
 * parser beside its description is what keeps the documented range and the checked one equal.
 * A refusal names the problem, never the value: values may be secrets.
 */
import { isIP } from 'node:net';
import { formatRateLimit, NO_LIMIT, parseRateLimit, RATE_LIMIT_FORM } from '../limits/rate-limit.js';
import type { HostPort } from './config.js';
import type { KindValue, SettingKind } from './settings.js';

export type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string };

const accept = <T>(value: T): Parsed<T> => ({ ok: true, value });
const refuse = (problem: string): Parsed<never> => ({ ok: false, problem });

/** `a`, `a or b`, `a, b or c`. */
const orList = (values: readonly string[]) =>
  values.length < 2 ? values.join('') : `${values.slice(0, -1).join(', ')} or ${values.at(-1)}`;

/** Parses a non-blank, trimmed `raw` as `type` says. */
export function parseKind<K extends SettingKind>(type: K, raw: string): Parsed<KindValue<K>> {
  return parseAny(type, raw) as Parsed<KindValue<K>>;
}

function parseAny(type: SettingKind, raw: string): Parsed<unknown> {
  switch (type.kind) {
    case 'text': {
      if (type.minLength === undefined) return accept(raw);
      return measure(raw, type.unit) < type.minLength ? refuse(`must be at least ${type.minLength} ${type.unit ?? 'characters'}`) : accept(raw);
    }
    case 'text-list': {
      const list = raw.split(',').map((s) => s.trim()).filter(Boolean);
      return list.some((s) => measure(s, type.unit) < type.minLength) ? refuse(`must each be at least ${type.minLength} ${type.unit}`) : accept(list);
    }
    case 'integer': {
      const value = /^\d+$/.test(raw) ? Number(raw) : NaN;
      const inRange = Number.isSafeInteger(value) && value >= type.min && value <= type.max;
      return inRange ? accept(value) : refuse(`must be a whole number from ${type.min} to ${type.max}`);
    }
    case 'enum':
      if (type.values.includes(raw)) return accept(raw);
      return refuse(type.values.length > 3 ? `must be one of ${type.values.join(', ')}` : `must be ${orList(type.values)}`);
    case 'http-url':
      if (!isHttpUrl(raw)) return refuse('must be an http:// or https:// URL');
      // A path is forwarded under (proxy/forward.ts); a query or fragment has nowhere to go.
      if (/[?#]/.test(raw)) return refuse('must not have a query or fragment (a base path such as /v1 is fine)');
      return accept(raw);
    case 'redis-url':
      return /^rediss?:\/\//.test(raw) ? accept(raw) : refuse('must start with redis:// or rediss://');
    case 'host-port-list':
      return parseHostPorts(raw);
    case 'file':
      return accept(raw);
    case 'dns-name':
      // A host name only: Node sends no SNI for an IP address, and the address is what is checked anyway.
      return /^(?=.{1,253}$)(?!\d+(\.\d+){3}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(raw)
        ? accept(raw)
        : refuse('must be a DNS host name');
    case 'trust-proxy':
      return parseTrustProxy(raw);
    case 'address-list': {
      const list = raw.split(',').map((s) => s.trim()).filter(Boolean);
      return list.length > 0 && list.every((entry) => PROXY_ADDR_NAMES.has(entry) || isAddressOrCidr(entry))
        ? accept(list)
        : refuse('must be comma-separated addresses/CIDRs (or loopback, linklocal, uniquelocal)');
    }
    case 'rate-limit': {
      if (raw === NO_LIMIT) return accept(NO_LIMIT);
      const limit = parseRateLimit(raw);
      return limit === undefined ? refuse(`must be \`off\` or ${RATE_LIMIT_FORM}`) : accept(formatRateLimit(limit));
    }
  }
}

/** What a kind accepts, in a few words, for the README and `authgate config`. */
export function describeKind(type: SettingKind): string {
  switch (type.kind) {
    case 'text':
      return type.minLength === undefined ? 'text' : `at least ${type.minLength} ${type.unit ?? 'characters'}`;
    case 'text-list':
      return type.minLength <= 1 ? 'comma-separated' : `comma-separated, each at least ${type.minLength} ${type.unit}`;
    case 'integer':
      return `${type.min} to ${type.max}`;
    case 'enum':
      return type.values.map((v) => `\`${v}\``).join(', ');
    case 'http-url':
      return '`http://` or `https://` URL, no query or fragment';
    case 'redis-url':
      return '`redis://` or `rediss://` URL';
    case 'host-port-list':
      return '`host:port` list, comma-separated';
    case 'file':
      return 'file path';
    case 'dns-name':
      return 'DNS host name';
    case 'trust-proxy':
      return '`false`, `true`, a hop count, or addresses/CIDRs';
    case 'address-list':
      return 'addresses/CIDRs, comma-separated';
    case 'rate-limit':
      return '`off` or `<count>/<window>` (window in s, m or h)';
  }
}

function measure(value: string, unit: 'bytes' | 'characters' | undefined): number {
  return unit === 'bytes' ? Buffer.byteLength(value) : value.length;
}

function parseHostPorts(raw: string): Parsed<HostPort[]> {
  const list: HostPort[] = [];
  for (const item of raw.split(',')) {
    const match = /^\s*(\[[^\]]+\]|[^:\s]+):(\d{1,5})\s*$/.exec(item);
    const port = match ? Number(match[2]) : NaN;
    if (!match || port < 1 || port > 65535) return refuse('must be a comma-separated list of host:port');
    list.push({ host: match[1]!.replace(/^\[|\]$/g, ''), port });
  }
  return accept(list);
}

function parseTrustProxy(raw: string): Parsed<boolean | number | string> {
  if (raw === 'false') return accept(false);
  if (raw === 'true') return accept(true);
  if (/^\d+$/.test(raw)) return accept(Number(raw));
  if (/^[0-9a-fA-F.:/,\s]+$/.test(raw) && raw.split(',').every(isAddressOrCidr)) return accept(raw);
  return refuse('must be false, true, a hop count, or comma-separated addresses/CIDRs');
}

/** The names proxy-addr expands to ranges (loopback: 127.0.0.1/8 and ::1/128). */
const PROXY_ADDR_NAMES: ReadonlySet<string> = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** An address or address/prefix that proxy-addr takes (it throws at server start on anything else). */
function isAddressOrCidr(entry: string): boolean {
  const [address = '', bits, ...rest] = entry.trim().split('/');
  const kind = isIP(address);
  if (kind === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  const prefix = /^\d{1,3}$/.test(bits) ? Number(bits) : 0;
  return prefix >= 1 && prefix <= (kind === 4 ? 32 : 128);
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}
