import { describe, expect, it } from 'vitest';
import { checkIssuerAddress, classifyAddress, type Resolver } from '../../lib/sso/address-guard.ts';

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
    ['64:ff9b::a00:1', 'reserved_address'],
    ['2002:a00:1::1', 'reserved_address'],
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
