import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../lib/local/api-server.ts';

/**
 * Completion callbacks are asked to reach private and metadata addresses only here, inside a fresh network
 * namespace with nothing but loopback (and a mount namespace whose /etc/hosts maps test names to a private, the
 * metadata and the loopback address, and whose resolv.conf points at loopback): no packet can leave the machine,
 * and each refusal asserted is the callback URL check's own, at the POST and again at delivery.
 */
interface Results {
  links: string;
  atPost: { url: string; status: number; code: string | null; reason: string | null }[];
  invocationsAfterRefusals: number;
  control: { status: number; callback: Record<string, unknown> };
  moved: { status: number; callback: Record<string, unknown> };
  received: string[];
}

let results: Results;
const dir = mkdtempSync(join(tmpdir(), 'slipway-netns-callbacks-'));

beforeAll(() => {
  const hosts = join(dir, 'hosts');
  const resolv = join(dir, 'resolv.conf');
  writeFileSync(
    hosts,
    `${readFileSync('/etc/hosts', 'utf8')}\n10.20.30.40 intranet.netns.test\n169.254.169.254 metadata.netns.test\n127.0.0.1 rebind.netns.test\n`,
  );
  writeFileSync(resolv, 'nameserver 127.0.0.1\n');
  const out = join(dir, 'results.json');
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    NETNS_RESULTS: out,
    NETNS_HOSTS: hosts,
    LOG_LEVEL: 'CRITICAL',
  };
  // The namespace starts its own moto_server; nothing outside it is reachable.
  delete env.AWS_ENDPOINT_URL;
  const script = [
    `mount --bind ${hosts} /etc/hosts`,
    `mount --bind ${resolv} /etc/resolv.conf`,
    'ip link set lo up',
    `exec "${process.execPath}" --import tsx test/support/netns-callbacks.ts`,
  ].join(' && ');
  const child = spawnSync('unshare', ['--net', '--mount', 'sh', '-c', script], { cwd: repoRoot, env, encoding: 'utf8', timeout: 240_000 });
  if (child.status !== 0) throw new Error(`namespace run failed (${child.status}): ${child.stderr}`);
  results = JSON.parse(readFileSync(out, 'utf8'));
}, 270_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('completion callbacks to private addresses, asked of the platform inside an empty network namespace', () => {
  it('the namespace has loopback only', () => {
    expect(
      results.links
        .trim()
        .split('\n')
        .map((l) => l.split(':')[1]!.trim()),
    ).toEqual(['lo']);
  });

  it('at the POST, names that resolve to a private or the metadata address are 400 CALLBACK_URL_INVALID, and no invocation is made', () => {
    expect(results.atPost.map(({ url, status, code, reason }) => [url.replace(/:\d+\//, ':PORT/'), status, code, reason])).toEqual([
      ['https://intranet.netns.test/hook', 400, 'CALLBACK_URL_INVALID', 'private_address'],
      ['https://metadata.netns.test/latest/meta-data/', 400, 'CALLBACK_URL_INVALID', 'metadata_address'],
      ['http://intranet.netns.test:PORT/hook', 400, 'CALLBACK_URL_INVALID', 'private_address'],
      ['https://no-such-host.invalid/hook', 400, 'CALLBACK_URL_INVALID', 'unresolvable'],
    ]);
    expect(results.invocationsAfterRefusals).toBe(0);
  });

  it('a control callback on loopback is delivered', () => {
    expect(results.control.status).toBe(202);
    expect(results.control.callback).toMatchObject({ attempts: 1, last_status: 200, last_error: null, delivered_at: expect.any(String) });
  });

  it('a name that moves to a private address after the POST is refused at each delivery attempt, never called', () => {
    expect(results.moved.status).toBe(202);
    expect(results.moved.callback).toMatchObject({
      attempts: 6,
      last_status: null,
      last_error: 'The callback URL resolves to a private network address, which is never called.',
      delivered_at: null,
    });
    expect(results.received).toEqual(['/control']);
  });
});
