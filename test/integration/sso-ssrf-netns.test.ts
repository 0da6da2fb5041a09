import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../lib/local/api-server.ts';

/**
 * The server is asked to reach private, link-local and metadata addresses only
 * here, inside a fresh network namespace with nothing but loopback (and a
 * mount namespace whose /etc/hosts maps two test names to a private and the
 * metadata address, and whose resolv.conf points at loopback): no packet can
 * leave the machine, and each refusal asserted is the guard's own
 * SSO_ISSUER_INVALID, never a connection error.
 */
interface Result {
  phase: string;
  issuer: string;
  status: number;
  code: string | null;
  details: { reason?: string } | null;
}

let results: Result[];
let links: string;
const dir = mkdtempSync(join(tmpdir(), 'slipway-netns-'));

beforeAll(() => {
  const hosts = join(dir, 'hosts');
  const resolv = join(dir, 'resolv.conf');
  writeFileSync(hosts, `${readFileSync('/etc/hosts', 'utf8')}\n10.20.30.40 intranet.netns.test\n169.254.169.254 metadata.netns.test\n`);
  writeFileSync(resolv, 'nameserver 127.0.0.1\n');
  const out = join(dir, 'results.json');
  const env: Record<string, string> = { ...(process.env as Record<string, string>), NETNS_RESULTS: out, LOG_LEVEL: 'CRITICAL' };
  // The namespace starts its own moto_server; nothing outside it is reachable.
  delete env.AWS_ENDPOINT_URL;
  const script = [
    `mount --bind ${hosts} /etc/hosts`,
    `mount --bind ${resolv} /etc/resolv.conf`,
    'ip link set lo up',
    `exec "${process.execPath}" --import tsx test/support/netns-sso-discover.ts`,
  ].join(' && ');
  const child = spawnSync('unshare', ['--net', '--mount', 'sh', '-c', script], { cwd: repoRoot, env, encoding: 'utf8', timeout: 150_000 });
  if (child.status !== 0) throw new Error(`namespace run failed (${child.status}): ${child.stderr}`);
  ({ results, links } = JSON.parse(readFileSync(out, 'utf8')));
}, 180_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const reasonsOf = (phase: string) =>
  Object.fromEntries(results.filter((r) => r.phase === phase).map((r) => [r.issuer, [r.status, r.code, r.details?.reason]]));

describe('SSO discovery SSRF refusals, asked of the server inside an empty network namespace', () => {
  it('the namespace has loopback only', () => {
    expect(
      links
        .trim()
        .split('\n')
        .map((l) => l.split(':')[1]!.trim()),
    ).toEqual(['lo']);
    expect(readdirSync(dir)).toContain('results.json');
  });

  it('the control issuer on loopback is discovered when loopback is allowed for local use', () => {
    const [control] = results.filter((r) => r.phase === 'control');
    expect(control).toMatchObject({ status: 200, code: null });
  });

  it('127.0.0.1, [::1], odd encodings of 127.0.0.1 and localhost are refused when loopback is not allowed', () => {
    const reasons = reasonsOf('loopback_not_allowed');
    expect(reasons['https://127.0.0.1/realms/acme']).toEqual([422, 'SSO_ISSUER_INVALID', 'loopback_address']);
    // The control provider itself, over http: refused before any connection.
    const idpIssuer = Object.keys(reasons).find((i) => i.startsWith('http://127.0.0.1:'))!;
    expect(reasons[idpIssuer]).toEqual([422, 'SSO_ISSUER_INVALID', 'http_not_allowed']);
    expect(reasons['https://[::1]/']).toEqual([422, 'SSO_ISSUER_INVALID', 'loopback_address']);
    expect(reasons['https://2130706433/']).toEqual([422, 'SSO_ISSUER_INVALID', 'loopback_address']);
    expect(reasons['https://0x7f000001/']).toEqual([422, 'SSO_ISSUER_INVALID', 'loopback_address']);
    expect(reasons['https://127.1/']).toEqual([422, 'SSO_ISSUER_INVALID', 'loopback_address']);
    expect(reasons['https://localhost/']).toEqual([422, 'SSO_ISSUER_INVALID', 'loopback_address']);
  });

  it('10.0.0.1, 169.254.169.254 and the other private, link-local and metadata forms are refused by the guard', () => {
    expect(reasonsOf('private_and_link_local')).toEqual({
      'http://10.0.0.1/realms/acme': [422, 'SSO_ISSUER_INVALID', 'private_address'],
      'https://10.0.0.1/realms/acme': [422, 'SSO_ISSUER_INVALID', 'private_address'],
      'http://169.254.169.254/latest/meta-data/': [422, 'SSO_ISSUER_INVALID', 'metadata_address'],
      'https://169.254.169.254/': [422, 'SSO_ISSUER_INVALID', 'metadata_address'],
      'http://[fd00:ec2::254]/': [422, 'SSO_ISSUER_INVALID', 'metadata_address'],
      'http://[::ffff:169.254.169.254]/': [422, 'SSO_ISSUER_INVALID', 'metadata_address'],
      'http://[::ffff:10.0.0.1]/': [422, 'SSO_ISSUER_INVALID', 'private_address'],
      'http://172.16.5.4/': [422, 'SSO_ISSUER_INVALID', 'private_address'],
      'http://192.168.1.1/': [422, 'SSO_ISSUER_INVALID', 'private_address'],
      'http://100.64.0.1/': [422, 'SSO_ISSUER_INVALID', 'private_address'],
      'http://[fe80::1]/': [422, 'SSO_ISSUER_INVALID', 'link_local_address'],
      'http://[fc00::1]/': [422, 'SSO_ISSUER_INVALID', 'private_address'],
      'http://0.0.0.0/': [422, 'SSO_ISSUER_INVALID', 'unspecified_address'],
      'http://0xa000001/': [422, 'SSO_ISSUER_INVALID', 'private_address'],
      // Host names resolved once through the system resolver (the namespace's /etc/hosts).
      'https://intranet.netns.test/realms/acme': [422, 'SSO_ISSUER_INVALID', 'private_address'],
      'https://metadata.netns.test/': [422, 'SSO_ISSUER_INVALID', 'metadata_address'],
    });
  });

  it('a name that does not resolve is SSO_ISSUER_UNREACHABLE', () => {
    expect(reasonsOf('unresolvable')).toEqual({ 'https://no-such-host.invalid/': [422, 'SSO_ISSUER_UNREACHABLE', 'unresolvable'] });
  });
});
