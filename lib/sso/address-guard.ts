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
 * unique-local, unspecified, broadcast, multicast and reserved are refused.
 * The IPv6 forms that embed an IPv4 address are judged by this module's own
 * table (EMBEDDING_FORMS), not by ipaddr.js's range names: an IPv4-mapped
 * address is the IPv4 address it maps; every other form (IPv4-compatible,
 * IPv4-translated, NAT64, local-use NAT64, 6to4, Teredo) and the deprecated
 * site-local range are refused whatever they embed, with the embedded
 * address's own refusal when it has one (`::7f00:1` is `loopback_address`,
 * `2002:a9fe:a9fe::` is `metadata_address`), else `reserved_address`
 * (`private_address` for site-local and local-use NAT64).
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

/**
 * The IPv6 forms that carry an IPv4 address, and the deprecated site-local range: each a prefix
 * (the first `bits` of the 16 bytes equal `prefix`), and where its IPv4 address (or addresses) sit.
 */
export type EmbeddingForm =
  | 'ipv4_mapped'
  | 'ipv4_compatible'
  | 'ipv4_translated'
  | 'nat64'
  | 'nat64_local'
  | '6to4'
  | 'teredo'
  | 'site_local';

interface EmbeddingRule {
  form: EmbeddingForm;
  prefix: number[];
  bits: number;
  /** The embedded IPv4 addresses, from the 16 bytes. */
  ipv4: (b: number[]) => number[][];
  /** The refusal when no embedded address has one of its own. */
  otherwise: AddressRefusal;
}

const last32 = (b: number[]) => [b.slice(12, 16)];

/** Checked in order: the first prefix that matches decides. */
export const EMBEDDING_FORMS: readonly EmbeddingRule[] = [
  // ::ffff:0:0/96 (RFC 4291): the IPv4 address itself, on a dual-stack socket.
  { form: 'ipv4_mapped', prefix: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff], bits: 96, ipv4: last32, otherwise: 'reserved_address' },
  // ::ffff:0:0:0/96 (RFC 6052 / 2765, SIIT): an IPv4-translated address.
  { form: 'ipv4_translated', prefix: [0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0], bits: 96, ipv4: last32, otherwise: 'reserved_address' },
  // ::/96 (RFC 4291, deprecated): IPv4-compatible. `::` and `::1` are judged as themselves before this table.
  { form: 'ipv4_compatible', prefix: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], bits: 96, ipv4: last32, otherwise: 'reserved_address' },
  // 64:ff9b::/96 (RFC 6052): the well-known NAT64 prefix.
  { form: 'nat64', prefix: [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0], bits: 96, ipv4: last32, otherwise: 'reserved_address' },
  // 64:ff9b:1::/48 (RFC 8215): local-use NAT64; as a /48 (RFC 6052 2.2) the IPv4 address is bytes 6-7 and 9-10.
  {
    form: 'nat64_local',
    prefix: [0, 0x64, 0xff, 0x9b, 0, 1],
    bits: 48,
    ipv4: (b) => [[b[6]!, b[7]!, b[9]!, b[10]!]],
    otherwise: 'private_address',
  },
  // 2002::/16 (RFC 3056): 6to4, the IPv4 address in bytes 2-5.
  { form: '6to4', prefix: [0x20, 0x02], bits: 16, ipv4: (b) => [b.slice(2, 6)], otherwise: 'reserved_address' },
  // 2001::/32 (RFC 4380): Teredo, the server's IPv4 address in bytes 4-7 and the client's, inverted, in bytes 12-15.
  {
    form: 'teredo',
    prefix: [0x20, 0x01, 0, 0],
    bits: 32,
    ipv4: (b) => [b.slice(4, 8), b.slice(12, 16).map((x) => x ^ 0xff)],
    otherwise: 'reserved_address',
  },
  // fec0::/10 (RFC 3879, deprecated): site-local, a private range.
  { form: 'site_local', prefix: [0xfe, 0xc0], bits: 10, ipv4: () => [], otherwise: 'private_address' },
];

function matchesPrefix(bytes: number[], prefix: number[], bits: number): boolean {
  for (let bit = 0; bit < bits; bit += 8) {
    const i = bit / 8;
    const mask = bits - bit >= 8 ? 0xff : (0xff << (8 - (bits - bit))) & 0xff;
    if (((bytes[i] ?? 0) & mask) !== ((prefix[i] ?? 0) & mask)) return false;
  }
  return true;
}

/** The embedding form of an IPv6 address, with the IPv4 addresses it carries; null for any other address. */
export function embeddingOf(address: ipaddr.IPv6): { form: EmbeddingForm; ipv4: ipaddr.IPv4[]; otherwise: AddressRefusal } | null {
  const bytes = address.toByteArray();
  // `::` and `::1` lie in ::/96 but are the unspecified and loopback addresses.
  if (bytes.slice(0, 15).every((b) => b === 0) && (bytes[15] ?? 0) <= 1) return null;
  const rule = EMBEDDING_FORMS.find((r) => matchesPrefix(bytes, r.prefix, r.bits));
  if (!rule) return null;
  return { form: rule.form, ipv4: rule.ipv4(bytes).map((b) => new ipaddr.IPv4(b)), otherwise: rule.otherwise };
}

/** Why an address may not be fetched, or null when it may. Loopback passes only when `allowLoopback`. */
export function classifyAddress(address: string, options: { allowLoopback: boolean }): AddressRefusal | null {
  if (!ipaddr.isValid(address)) return 'reserved_address';
  let ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6') {
    const embedding = embeddingOf(ip as ipaddr.IPv6);
    // An IPv4-mapped IPv6 address (::ffff:a.b.c.d) reaches the IPv4 address: judge that one.
    if (embedding?.form === 'ipv4_mapped') ip = embedding.ipv4[0]!;
    else if (embedding) {
      // Every other form is refused whatever it carries: with the carried address's reason when it has one.
      for (const ipv4 of embedding.ipv4) {
        const refusal = classifyAddress(ipv4.toString(), { allowLoopback: false });
        if (refusal) return refusal;
      }
      return embedding.otherwise;
    }
  }
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
