import { describe, expect, it } from 'vitest';
import { checkIssuerAddress, classifyAddress, EMBEDDING_FORMS, type Resolver } from '../../lib/sso/address-guard.ts';

/** An injected resolver: no DNS query leaves the machine in these tests. */
const resolverOf =
  (table: Record<string, string[]>): Resolver =>
  async (hostname) => {
    const addresses = table[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

const resolve = resolverOf({
  'idp.example.com': ['93.184.215.14'],
  'intranet.example.com': ['10.1.2.3'],
  'mixed.example.com': ['93.184.215.14', '192.168.1.10'],
  'v6private.example.com': ['fd12:3456::1'],
  'metadata.example.com': ['169.254.169.254'],
  localhost: ['127.0.0.1', '::1'],
});

const check = (url: string, allowLoopbackHttp = false) => checkIssuerAddress(new URL(url), { allowLoopbackHttp, resolve });

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback_address'],
    ['127.8.9.10', 'loopback_address'],
    ['::1', 'loopback_address'],
    ['10.0.0.1', 'private_address'],
    ['172.16.0.1', 'private_address'],
    ['172.31.255.254', 'private_address'],
    ['192.168.0.1', 'private_address'],
    ['100.64.0.1', 'private_address'],
    ['fc00::1', 'private_address'],
    ['fd12:3456::1', 'private_address'],
    ['169.254.169.254', 'metadata_address'],
    ['fd00:ec2::254', 'metadata_address'],
    ['169.254.10.20', 'link_local_address'],
    ['fe80::1', 'link_local_address'],
    ['0.0.0.0', 'unspecified_address'],
    ['::', 'unspecified_address'],
    ['224.0.0.1', 'multicast_address'],
    ['255.255.255.255', 'multicast_address'],
    ['ff02::1', 'multicast_address'],
    ['::ffff:127.0.0.1', 'loopback_address'],
    ['::ffff:10.0.0.1', 'private_address'],
    ['::ffff:169.254.169.254', 'metadata_address'],
    ['64:ff9b::a00:1', 'private_address'],
    ['2002:a00:1::1', 'private_address'],
    ['192.0.2.1', 'reserved_address'],
  ])('%s is refused as %s', (address, refusal) => {
    expect(classifyAddress(address, { allowLoopback: false })).toBe(refusal);
  });

  it('public unicast addresses pass', () => {
    for (const address of ['93.184.215.14', '8.8.8.8', '172.32.0.1', '2001:4860:4860::8888']) {
      expect(classifyAddress(address, { allowLoopback: false })).toBeNull();
    }
  });

  it('loopback passes only with the local-use exception, and nothing else does with it', () => {
    expect(classifyAddress('127.0.0.1', { allowLoopback: true })).toBeNull();
    expect(classifyAddress('::1', { allowLoopback: true })).toBeNull();
    expect(classifyAddress('10.0.0.1', { allowLoopback: true })).toBe('private_address');
    expect(classifyAddress('169.254.169.254', { allowLoopback: true })).toBe('metadata_address');
  });
});

/**
 * The IPv6 forms that carry an IPv4 address (issue 39): address by address, each form carrying the
 * loopback, the metadata, a private and a public IPv4 address. Only the IPv4-mapped form is judged as
 * the address it carries (a public one passes); every other form is refused whatever it carries.
 */
describe('classifyAddress: IPv6 forms that embed an IPv4 address', () => {
  it.each([
    // IPv4-compatible ::/96 (the probe's addresses)
    ['::7f00:1', 'loopback_address'],
    ['::127.0.0.1', 'loopback_address'],
    ['::a9fe:a9fe', 'metadata_address'],
    ['::169.254.169.254', 'metadata_address'],
    ['::a00:1', 'private_address'],
    ['::c0a8:101', 'private_address'],
    ['::808:808', 'reserved_address'],
    ['::0.0.0.2', 'unspecified_address'],
    // IPv4-translated ::ffff:0:0:0/96
    ['::ffff:0:7f00:1', 'loopback_address'],
    ['::ffff:0:a9fe:a9fe', 'metadata_address'],
    ['::ffff:0:808:808', 'reserved_address'],
    // 6to4 2002::/16: the IPv4 address in the second and third groups
    ['2002:7f00:1::', 'loopback_address'],
    ['2002:7f00:1:0:0:0:0:1', 'loopback_address'],
    ['2002:a9fe:a9fe::1', 'metadata_address'],
    ['2002:c0a8:101::1', 'private_address'],
    ['2002:808:808::1', 'reserved_address'],
    // Teredo 2001::/32: the server in the third and fourth groups, the client inverted in the last two
    ['2001:0:7f00:1::', 'loopback_address'],
    ['2001:0:808:808:0:0:80ff:fffe', 'loopback_address'],
    ['2001:0:808:808::5601:5601', 'metadata_address'],
    ['2001:0:a9fe:a9fe::', 'metadata_address'],
    ['2001:0:808:808::f5ff:fffe', 'private_address'],
    ['2001:0:808:808::f7f7:f7f7', 'reserved_address'],
    // NAT64 64:ff9b::/96
    ['64:ff9b::7f00:1', 'loopback_address'],
    ['64:ff9b::127.0.0.1', 'loopback_address'],
    ['64:ff9b::a9fe:a9fe', 'metadata_address'],
    ['64:ff9b::a00:1', 'private_address'],
    ['64:ff9b::808:808', 'reserved_address'],
    // Local-use NAT64 64:ff9b:1::/48: the IPv4 address in bytes 6-7 and 9-10
    ['64:ff9b:1:7f00:1::', 'loopback_address'],
    ['64:ff9b:1:a9fe:a9:fe00::', 'metadata_address'],
    ['64:ff9b:1:a00:1::', 'private_address'],
    ['64:ff9b:1:808:8:800::', 'private_address'],
    ['64:ff9b:1:5db8:d8:2200::', 'private_address'],
    // Deprecated site-local fec0::/10
    ['fec0::1', 'private_address'],
    ['fec0::7f00:1', 'private_address'],
    ['feff:ffff::1', 'private_address'],
    // IPv4-mapped ::ffff:0:0/96: judged as the IPv4 address
    ['::ffff:7f00:1', 'loopback_address'],
    ['::ffff:a9fe:a9fe', 'metadata_address'],
    ['::ffff:c0a8:101', 'private_address'],
  ])('%s is refused as %s', (address, refusal) => {
    expect(classifyAddress(address, { allowLoopback: false })).toBe(refusal);
  });

  it('the local-use loopback exception never lets an embedded loopback address through, only ::1 and 127.0.0.0/8', () => {
    for (const address of ['::7f00:1', '2002:7f00:1::', '2001:0:7f00:1::', '64:ff9b::7f00:1', '64:ff9b:1:7f00:1::', '::ffff:0:7f00:1']) {
      expect(classifyAddress(address, { allowLoopback: true }), address).toBe('loopback_address');
    }
    expect(classifyAddress('::ffff:127.0.0.1', { allowLoopback: true })).toBeNull();
  });

  it('an IPv4-mapped public address passes; :: and ::1 are themselves, not IPv4-compatible forms', () => {
    expect(classifyAddress('::ffff:808:808', { allowLoopback: false })).toBeNull();
    expect(classifyAddress('::', { allowLoopback: false })).toBe('unspecified_address');
    expect(classifyAddress('::1', { allowLoopback: false })).toBe('loopback_address');
  });

  it('addresses just outside each prefix are not taken for the form', () => {
    expect(classifyAddress('2003:7f00:1::1', { allowLoopback: false })).toBeNull();
    expect(classifyAddress('2001:1:7f00:1::', { allowLoopback: false })).not.toBe('loopback_address');
    expect(classifyAddress('64:ff9a::7f00:1', { allowLoopback: false })).toBeNull();
    expect(classifyAddress('fe80::1', { allowLoopback: false })).toBe('link_local_address');
    expect(classifyAddress('ff02::1', { allowLoopback: false })).toBe('multicast_address');
  });

  it('names every form the issue lists', () => {
    expect(EMBEDDING_FORMS.map((f) => f.form).sort()).toEqual(
      ['6to4', 'ipv4_compatible', 'ipv4_mapped', 'ipv4_translated', 'nat64', 'nat64_local', 'site_local', 'teredo'].sort(),
    );
  });
});

describe('checkIssuerAddress: the SSRF refusals', () => {
  it('refuses 127.0.0.1 when loopback is not allowed, over https and over http', async () => {
    expect(await check('https://127.0.0.1/realms/acme')).toEqual({ ok: false, refusal: 'loopback_address' });
    expect(await check('http://127.0.0.1:8080/realms/acme')).toEqual({ ok: false, refusal: 'http_not_allowed' });
  });

  it('refuses 10.0.0.1, 169.254.169.254 and [::1]', async () => {
    expect(await check('https://10.0.0.1/')).toEqual({ ok: false, refusal: 'private_address' });
    expect(await check('https://169.254.169.254/latest/meta-data')).toEqual({ ok: false, refusal: 'metadata_address' });
    expect(await check('https://[::1]/')).toEqual({ ok: false, refusal: 'loopback_address' });
    expect(await check('https://[::ffff:169.254.169.254]/')).toEqual({ ok: false, refusal: 'metadata_address' });
    // The loopback exception is for loopback only.
    expect(await check('http://10.0.0.1/', true)).toEqual({ ok: false, refusal: 'private_address' });
    expect(await check('http://169.254.169.254/', true)).toEqual({ ok: false, refusal: 'metadata_address' });
  });

  it('normalizes odd encodings of 127.0.0.1 before the check (WHATWG URL parsing)', async () => {
    for (const odd of ['https://2130706433/', 'https://0x7f000001/', 'https://127.1/', 'https://0177.0.0.1/', 'https://[::ffff:7f00:1]/']) {
      expect(await check(odd)).toEqual({ ok: false, refusal: 'loopback_address' });
    }
    expect(await check('http://2130706433/')).toEqual({ ok: false, refusal: 'http_not_allowed' });
    expect(await check('https://0xa000001/')).toEqual({ ok: false, refusal: 'private_address' });
  });

  it('refuses a hostname that resolves to a private address, and one where any address is private', async () => {
    expect(await check('https://intranet.example.com/')).toEqual({ ok: false, refusal: 'private_address' });
    expect(await check('https://mixed.example.com/')).toEqual({ ok: false, refusal: 'private_address' });
    expect(await check('https://v6private.example.com/')).toEqual({ ok: false, refusal: 'private_address' });
    expect(await check('https://metadata.example.com/')).toEqual({ ok: false, refusal: 'metadata_address' });
    expect(await check('https://localhost/')).toEqual({ ok: false, refusal: 'loopback_address' });
  });

  it('passes a public https issuer with the addresses to connect to', async () => {
    const result = await check('https://idp.example.com/realms/acme');
    expect(result).toMatchObject({ ok: true, hostname: 'idp.example.com', addresses: [{ address: '93.184.215.14', family: 4 }] });
  });

  it('refuses http for a public address even with the local-use exception', async () => {
    expect(await check('http://idp.example.com/', true)).toEqual({ ok: false, refusal: 'http_not_allowed' });
    expect(await check('http://idp.example.com/')).toEqual({ ok: false, refusal: 'http_not_allowed' });
  });

  it('allows http on loopback only with the local-use exception', async () => {
    expect(await check('http://127.0.0.1:8080/realms/acme', true)).toMatchObject({ ok: true, addresses: [{ address: '127.0.0.1' }] });
    expect(await check('http://localhost:8080/', true)).toMatchObject({
      ok: true,
      addresses: [{ address: '127.0.0.1' }, { address: '::1' }],
    });
  });

  it('refuses other schemes, credentials, query strings and fragments', async () => {
    expect(await check('ftp://idp.example.com/')).toEqual({ ok: false, refusal: 'scheme_not_allowed' });
    expect(await check('file:///etc/passwd')).toEqual({ ok: false, refusal: 'scheme_not_allowed' });
    expect(await check('https://user:pass@idp.example.com/')).toEqual({ ok: false, refusal: 'credentials_in_url' });
    expect(await check('https://user@idp.example.com/')).toEqual({ ok: false, refusal: 'credentials_in_url' });
    expect(await check('https://idp.example.com/?x=1')).toEqual({ ok: false, refusal: 'query_or_fragment' });
    expect(await check('https://idp.example.com/?')).toEqual({ ok: false, refusal: 'query_or_fragment' });
    expect(await check('https://idp.example.com/#top')).toEqual({ ok: false, refusal: 'query_or_fragment' });
  });

  it('reports a name that does not resolve as unresolvable', async () => {
    expect(await check('https://nowhere.example.com/')).toEqual({ ok: false, unresolvable: true });
  });
});
