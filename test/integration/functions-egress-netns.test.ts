import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../lib/local/api-server.ts';

/**
 * A function's outbound rule, tried from inside a sandboxed instance whose
 * host runs in a fresh network namespace with nothing but loopback (and a
 * mount namespace whose /etc/hosts maps private.netns.test to 10.20.30.40,
 * whose resolv.conf points at loopback): no packet can leave the machine even
 * if a rule failed. Each refusal asserted is the egress proxy's own (a 403
 * with its reason, reported as egress_refused) or the empty namespace's
 * ENETUNREACH for a raw socket, never a connection error to the target.
 */
interface FetchResult {
  status?: number;
  refused?: string | null;
  error?: { name: string | null; message: string; cause: string | null; code: string | null };
}
interface Results {
  status: number;
  outcome: string;
  seen: {
    fetches: Record<string, FetchResult>;
    userAgent: FetchResult;
    globalAgent: FetchResult;
    rawPrivate: FetchResult & { connected?: boolean };
    rawPublic: FetchResult & { connected?: boolean };
    rawTls: FetchResult & { connected?: boolean };
    interfaces: string[];
  };
  refusals: { reason: string; target: string }[];
  raw: Record<string, { status: number; reason: string | null }>;
  direct: { reason: string; target: string }[];
  links: string;
  fallbacks: string[];
}

let results: Results;
const dir = mkdtempSync(join(tmpdir(), 'slipway-fn-netns-'));

beforeAll(() => {
  const hosts = join(dir, 'hosts');
  const resolv = join(dir, 'resolv.conf');
  writeFileSync(hosts, `${readFileSync('/etc/hosts', 'utf8')}\n10.20.30.40 private.netns.test\n`);
  writeFileSync(resolv, 'nameserver 127.0.0.1\n');
  const out = join(dir, 'results.json');
  const env: Record<string, string> = { ...(process.env as Record<string, string>), NETNS_RESULTS: out, LOG_LEVEL: 'CRITICAL' };
  const script = [
    `mount --bind ${hosts} /etc/hosts`,
    `mount --bind ${resolv} /etc/resolv.conf`,
    'ip link set lo up',
    `exec "${process.execPath}" --import tsx test/support/functions-egress-in-netns.ts`,
  ].join(' && ');
  const child = spawnSync('unshare', ['--net', '--mount', 'sh', '-c', script], { cwd: repoRoot, env, encoding: 'utf8', timeout: 150_000 });
  if (child.status !== 0) throw new Error(`namespace run failed (${child.status}): ${child.stderr}`);
  results = JSON.parse(readFileSync(out, 'utf8'));
}, 180_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A fetch the proxy refused: no response, and not a connection error of any
 * kind (undici reports a refused tunnel only as a cancelled request; the
 * proxy's own refusal, with its reason, is asserted from its events).
 */
const refusedByProxy = (result: FetchResult | undefined) => {
  expect(result?.error).toBeDefined();
  expect(result?.status).toBeUndefined();
  expect(String(result?.error?.code ?? '')).not.toMatch(/^E(CONNREFUSED|NETUNREACH|HOSTUNREACH|CONNRESET|TIMEDOUT)$/);
  expect(`${result?.error?.message} ${result?.error?.cause}`).not.toMatch(/ECONNREFUSED|ENETUNREACH|EHOSTUNREACH/);
};

describe('functions outbound rule, tried inside an empty network namespace', () => {
  it('the namespace has loopback only, and so has the instance', () => {
    expect(
      results.links
        .trim()
        .split('\n')
        .map((l) => l.split(':')[1]!.trim()),
    ).toEqual(['lo']);
    expect(results.seen.interfaces).toEqual(['lo']);
    expect(results.fallbacks).toEqual([]);
    expect([results.status, results.outcome]).toEqual([200, 'response']);
  });

  it('fetch to loopback, private, link-local, metadata, numeric and IPv4-mapped forms and a hosts-file name is refused by the proxy with its reason', () => {
    const expected: Record<string, [string, string]> = {
      'https://127.0.0.1/': ['127.0.0.1:443', 'loopback_address'],
      'https://10.0.0.1/': ['10.0.0.1:443', 'private_address'],
      'https://169.254.169.254/': ['169.254.169.254:443', 'metadata_address'],
      'https://[::1]/': ['[::1]:443', 'loopback_address'],
      'https://2130706433/': ['127.0.0.1:443', 'loopback_address'],
      'https://[::ffff:127.0.0.1]/': ['[::ffff:7f00:1]:443', 'loopback_address'],
      'https://private.netns.test/': ['private.netns.test:443', 'private_address'],
    };
    for (const [url, [target, reason]] of Object.entries(expected)) {
      refusedByProxy(results.seen.fetches[url]);
      expect(results.refusals, url).toContainEqual({ target, reason });
    }
  });

  it('port 80 is refused by the proxy before any name is resolved', () => {
    refusedByProxy(results.seen.fetches['http://example.com:80/']);
    expect(results.refusals).toContainEqual({ target: 'example.com:80', reason: 'port_not_allowed' });
  });

  it('a public address passes the rule (the control): no refusal, only the namespace has no route', () => {
    expect(results.refusals.some((r) => r.target.startsWith('1.1.1.1'))).toBe(false);
    expect(results.seen.fetches['https://1.1.1.1/']!.error).toBeDefined();
  });

  it('an https.Agent made by user code and the global agent go through the proxy too', () => {
    refusedByProxy(results.seen.userAgent);
    expect(results.refusals).toContainEqual({ target: '169.254.169.254:443', reason: 'metadata_address' });
    refusedByProxy(results.seen.globalAgent);
    expect(results.seen.userAgent.error?.message).toMatch(/403/);
    expect(results.seen.globalAgent.error?.message).toMatch(/403/);
  });

  it('raw net and tls sockets get ENETUNREACH in the instance namespace', () => {
    expect(results.seen.rawPrivate.error?.code).toBe('ENETUNREACH');
    expect(results.seen.rawPublic.error?.code).toBe('ENETUNREACH');
    expect(results.seen.rawTls.error?.code).toBe('ENETUNREACH');
  });

  it('the proxy itself refuses odd target forms with a 403 and its reason', () => {
    expect(results.raw).toEqual({
      '2130706433:443': { status: 403, reason: 'loopback_address' },
      '0x7f000001:443': { status: 403, reason: 'loopback_address' },
      '127.1:443': { status: 403, reason: 'loopback_address' },
      '[::ffff:127.0.0.1]:443': { status: 403, reason: 'loopback_address' },
      '[::ffff:7f00:1]:443': { status: 403, reason: 'loopback_address' },
      '[fd00:ec2::254]:443': { status: 403, reason: 'metadata_address' },
      'private.netns.test:443': { status: 403, reason: 'private_address' },
      'localhost:443': { status: 403, reason: 'loopback_address' },
      '10.0.0.1:8443': { status: 403, reason: 'port_not_allowed' },
      '1.1.1.1:80': { status: 403, reason: 'port_not_allowed' },
      'example.com': { status: 403, reason: 'bad_target' },
      'user@1.1.1.1:443': { status: 403, reason: 'bad_target' },
      'no-such-host.invalid:443': { status: 403, reason: 'unresolvable' },
    });
    expect(results.direct).toHaveLength(13);
  });
});
