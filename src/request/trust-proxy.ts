/** The trustProxy option fastify gets for AUTHGATE_TRUST_PROXY. */
export type TrustProxy = boolean | string | ((address: string, hop: number) => boolean);

/**
 * `true`, `false` and address/CIDR lists go to fastify as they are. A hop count does not:
 * recent fastify 5 releases (5.12 here) trust nothing for a number, since it cannot check the
 * direct peer, which silently made every client behind the ingress one address. The documented meaning is kept
 * with a function: the nearest `hops` proxies are believed, whoever they are, which is only
 * right when nothing but those proxies can reach the public port (the chart's NetworkPolicy).
 */
export function trustProxyOption(setting: boolean | number | string): TrustProxy {
  if (typeof setting !== 'number') return setting;
  if (setting <= 0) return false;
  return (_address, hop) => hop < setting;
}
