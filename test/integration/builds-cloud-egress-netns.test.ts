import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../lib/local/api-server.ts';
import { scaled } from '../support/wait.ts';

/**
 * The cloud build's egress (lib/builds/script/cloud.mjs with egress.mjs, as the CodeBuild image holds them), tried
 * inside a network namespace of its own whose only link is loopback and whose default route goes through it: a
 * connection to a public address is a blackhole (its SYNs are dropped in the namespace), as a registry behind a
 * dropping network ACL is in the cloud. Without the egress proxy npm waited out the OS's connect timeout twice
 * (about 4 minutes); with it the install fails within a minute with the line a local build gives.
 */
interface BuildResult {
  container: { code: number; ms: number };
  state: string;
  failure: { kind: string; line: string } | null;
  lines: string[];
}
let results: { links: string; routes: string; blackholed: BuildResult; refused: BuildResult };
const dir = mkdtempSync(join(tmpdir(), 'slipway-netns-build-egress-'));

beforeAll(() => {
  const hosts = join(dir, 'hosts');
  const resolv = join(dir, 'resolv.conf');
  writeFileSync(hosts, `${readFileSync('/etc/hosts', 'utf8')}\n1.1.1.1 registry.blackhole.test\n127.0.0.1 registry.loopback.test\n`);
  writeFileSync(resolv, 'nameserver 127.0.0.1\n');
  const out = join(dir, 'results.json');
  const env: Record<string, string> = { ...(process.env as Record<string, string>), NETNS_RESULTS: out, LOG_LEVEL: 'CRITICAL' };
  // The namespace starts its own moto_server; nothing outside it is reachable.
  delete env.AWS_ENDPOINT_URL;
  const script = [
    `mount --bind ${hosts} /etc/hosts`,
    `mount --bind ${resolv} /etc/resolv.conf`,
    'ip link set lo up',
    'ip route add default dev lo',
    `exec "${process.execPath}" --import tsx test/support/builds-cloud-egress-in-netns.ts`,
  ].join(' && ');
  const child = spawnSync('unshare', ['--net', '--mount', 'sh', '-c', script], { cwd: repoRoot, env, encoding: 'utf8', timeout: 240_000 });
  if (child.status !== 0) throw new Error(`namespace run failed (${child.status}): ${child.stderr}`);
  results = JSON.parse(readFileSync(out, 'utf8'));
}, 270_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a cloud build whose registry cannot be reached, inside a network namespace of its own', () => {
  it('the namespace has loopback only, and every other address routes into it', () => {
    expect(
      results.links
        .trim()
        .split('\n')
        .map((l) => l.split(':')[1]!.trim()),
    ).toEqual(['lo']);
    expect(results.routes).toContain('default dev lo');
  });

  it('a blackholed registry fails the install within a minute, with the line naming it and a log line for each failed connection', () => {
    const { container, state, failure, lines } = results.blackholed;
    expect(container.code).toBe(0);
    expect(state).toBe('failed');
    expect(failure).toEqual({
      kind: 'user',
      line: 'Install failed: the package registry could not be reached: the connection to registry.blackhole.test:443 failed.',
    });
    expect(lines).toContain('Outbound connection to registry.blackhole.test:443 (1.1.1.1) failed: no answer within 15 s.');
    // npm prints nothing while it waits: the heartbeat says so.
    expect(lines.find((l) => l.startsWith('Still running:'))).toMatch(
      /^Still running: `npm ci --no-audit --no-fund` has printed nothing for 3\d s \(3\d s in all\)\.$/,
    );
    expect(lines.at(-1)).toBe(failure!.line);
    expect(container.ms).toBeLessThan(scaled(60_000));
  });

  it("a registry on a loopback address is refused at once, with the egress rule's reason", () => {
    const { state, failure, lines } = results.refused;
    expect(state).toBe('failed');
    expect(failure?.line).toBe(
      "Install failed: the package registry could not be reached: the build's egress rule refused registry.loopback.test:443: The host resolves to a loopback address, which is blocked.",
    );
    expect(lines).toContain(
      'Outbound connection to registry.loopback.test:443 refused: The host resolves to a loopback address, which is blocked.',
    );
  });
});
