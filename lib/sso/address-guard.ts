import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

/**
 * The SSRF guard of SSO discovery. An issuer address comes from a team admin
 * and the server fetches it, so before any connection: the scheme and shape
 * of the address are checked, its hostname is resolved once, and every
 * resolved address must be a public unicast address. The caller then connects
 * to the address resolved here (never resolving again), so a DNS answer that
 * changes between check and connect (rebinding) cannot move the request.
 *
 * Deny by default: only ipaddr.js's `unicast` range passes, so private,
 * carrier-grade NAT, loopback, link-local (including the metadata address),
 * unique-local, unspecified, broadcast, multicast, reserved and the IPv6
 * forms that embed an IPv4 address (mapped, NAT64, 6to4, Teredo) are refused.
 */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a hostname to all of its addresses (dns.lookup semantics: hosts file, then DNS). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));

export type AddressRefusal =
  | 'metadata_address'
  | 'loopback_address'
  | 'private_address'
  | 'link_local_address'
  | 'unspecified_address'
  | 'multicast_address'
  | 'reserved_address';

export type IssuerRefusal =
  | AddressRefusal
  | 'scheme_not_allowed'
  | 'http_not_allowed'
  | 'credentials_in_url'
  | 'query_or_fragment'
  | 'hostname_missing';

export const refusalMessages: Record<IssuerRefusal, string> = {
  scheme_not_allowed: 'The issuer must be an https:// address.',
  http_not_allowed: 'The issuer must be an https:// address.',
  credentials_in_url: 'The issuer address must not contain a user name or password.',
  query_or_fragment: 'The issuer address must not contain a query string or fragment.',
  hostname_missing: 'The issuer address has no host name.',
  metadata_address: 'The issuer resolves to a cloud metadata address, which is never fetched.',
  loopback_address: 'The issuer resolves to a loopback address, which is not reachable from the platform.',
  private_address: 'The issuer resolves to a private network address, which is not reachable from the platform.',
  link_local_address: 'The issuer resolves to a link-local address, which is not reachable from the platform.',
  unspecified_address: 'The issuer resolves to an unspecified address.',
  multicast_address: 'The issuer resolves to a multicast or broadcast address.',
  reserved_address: 'The issuer resolves to a reserved address, which is not reachable from the platform.',
};

const METADATA_ADDRESSES = new Set(['169.254.169.254', 'fd00:ec2::254']);

/** Why an address may not be fetched, or null when it may. Loopback passes only when `allowLoopback`. */
export function classifyAddress(address: string, options: { allowLoopback: boolean }): AddressRefusal | null {
  if (!ipaddr.isValid(address)) return 'reserved_address';
  let ip = ipaddr.parse(address);
  // An IPv4-mapped IPv6 address (::ffff:a.b.c.d) reaches the IPv4 address: judge that one.
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  if (METADATA_ADDRESSES.has(ip.toNormalizedString()) || METADATA_ADDRESSES.has(ip.toString())) return 'metadata_address';
  const range = ip.range();
  switch (range) {
    case 'unicast':
      return null;
    case 'loopback':
      return options.allowLoopback ? null : 'loopback_address';
    case 'private':
    case 'carrierGradeNat':
    case 'uniqueLocal':
      return 'private_address';
    case 'linkLocal':
      return 'link_local_address';
    case 'unspecified':
      return 'unspecified_address';
    case 'multicast':
    case 'broadcast':
      return 'multicast_address';
    default:
      return 'reserved_address';
  }
}

export type IssuerAddressCheck =
  | { ok: true; url: URL; hostname: string; addresses: ResolvedAddress[] }
  | { ok: false; refusal: IssuerRefusal }
  | { ok: false; unresolvable: true };

/**
 * Checks an issuer URL (already parsed by the WHATWG URL parser, which turns
 * `http://2130706433/`, `http://0x7f000001/` and `http://127.1/` into
 * 127.0.0.1) and resolves it once. http is accepted only when
 * `allowLoopbackHttp` is set and every address is loopback (a local identity
 * provider during development and tests); in production only https.
 */
export async function checkIssuerAddress(
  url: URL,
  options: { allowLoopbackHttp: boolean; resolve?: Resolver },
): Promise<IssuerAddressCheck> {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, refusal: 'scheme_not_allowed' };
  if (url.protocol === 'http:' && !options.allowLoopbackHttp) return { ok: false, refusal: 'http_not_allowed' };
  if (url.username || url.password) return { ok: false, refusal: 'credentials_in_url' };
  if (url.search || url.hash || url.href.includes('?') || url.href.includes('#')) return { ok: false, refusal: 'query_or_fragment' };
  // IPv6 literals keep their brackets in `hostname`.
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!hostname) return { ok: false, refusal: 'hostname_missing' };

  let addresses: ResolvedAddress[];
  if (ipaddr.isValid(hostname)) {
    addresses = [{ address: hostname, family: ipaddr.parse(hostname).kind() === 'ipv6' ? 6 : 4 }];
  } else {
    try {
      addresses = await (options.resolve ?? systemResolver)(hostname);
    } catch {
      return { ok: false, unresolvable: true };
    }
    if (addresses.length === 0) return { ok: false, unresolvable: true };
  }

  // Every address must pass: a name with one public and one private address could be connected to either.
  for (const { address } of addresses) {
    const refusal = classifyAddress(address, { allowLoopback: options.allowLoopbackHttp });
    if (refusal) return { ok: false, refusal };
  }
  if (url.protocol === 'http:') {
    const allLoopback = addresses.every(({ address }) => {
      const ip = ipaddr.process(address);
      return ip.range() === 'loopback';
    });
    if (!allLoopback) return { ok: false, refusal: 'http_not_allowed' };
  }
  return { ok: true, url, hostname, addresses };
}
