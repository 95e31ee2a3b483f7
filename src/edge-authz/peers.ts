import proxyAddr from '@fastify/proxy-addr';

/** Whether a peer address is one of AUTHGATE_AUTHZ_TRUSTED_PROXIES. */
export type PeerTrust = (address: string | undefined) => boolean;

/**
 * The edge proxies the authorization endpoints answer (every protocol's: HTTP and gRPC): only
 * they may describe an original request, name its client's address and learn a decision, so any
 * other peer is refused before anything is decided. proxy-addr's grammar, as AUTHGATE_TRUST_PROXY
 * (addresses, CIDRs, `loopback`, `linklocal`, `uniquelocal`; an IPv4-mapped IPv6 peer is matched
 * as its IPv4 address), compiled once.
 */
export function trustedPeers(entries: readonly string[]): PeerTrust {
  const trusted = proxyAddr.compile([...entries]);
  return (address) => address !== undefined && address !== '' && trusted(address, 0);
}
