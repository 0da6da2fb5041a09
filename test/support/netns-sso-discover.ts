/**
 * Run by test/integration/sso-ssrf-netns.test.ts inside its own empty network
 * namespace (only `lo`, which the parent brings up): starts the whole local
 * platform there (moto_server included) and asks the discover endpoint to
 * reach private, link-local, metadata and loopback addresses. Whatever the
 * guard missed could only ever meet an empty namespace; the test asserts that
 * the guard refused each one itself. Results go to the file in NETNS_RESULTS.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSession } from '../../lib/identity/credential-records.ts';
import { createUser } from '../../lib/users/user-records.ts';
import { startLocalPlatform } from '../../lib/local/platform.ts';
import { createTeam } from '../../lib/teams/teams.ts';

interface Result {
  phase: string;
  issuer: string;
  status: number;
  code: string | null;
  details: unknown;
}

const platform = await startLocalPlatform({ port: 0, prefix: 'netns' });
try {
  const owner = await createUser({ email: 'netns-owner@example.test', name: 'Owner' });
  await createTeam({ name: 'Namespace Team', ownerUserId: owner.user_id });
  const token = await createSession(owner.user_id);

  // A control: a real identity provider on loopback, so refusals below are the guard's, not a broken setup.
  const idp = createServer((req, res) => {
    const issuer = `http://127.0.0.1:${(idp.address() as AddressInfo).port}/realms/acme`;
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ issuer, authorization_endpoint: `${issuer}/a`, token_endpoint: `${issuer}/t`, jwks_uri: `${issuer}/k` }));
  });
  await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', resolve));
  const idpOrigin = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;

  const results: Result[] = [];
  const discover = async (phase: string, issuer: string) => {
    const res = await fetch(`${platform.baseUrl}/api/v1/team/sso/discover`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ issuer }),
    });
    const body = (await res.json()) as { code?: string; details?: unknown };
    results.push({ phase, issuer, status: res.status, code: body.code ?? null, details: body.details ?? null });
  };

  process.env.SSO_ALLOW_LOOPBACK_HTTP = 'false';
  for (const issuer of [
    'https://127.0.0.1/realms/acme',
    `${idpOrigin}/realms/acme`,
    'https://[::1]/',
    'https://2130706433/',
    'https://0x7f000001/',
    'https://127.1/',
    'https://localhost/',
  ]) {
    await discover('loopback_not_allowed', issuer);
  }

  process.env.SSO_ALLOW_LOOPBACK_HTTP = 'true';
  await discover('control', `${idpOrigin}/realms/acme`);
  for (const issuer of [
    'http://10.0.0.1/realms/acme',
    'https://10.0.0.1/realms/acme',
    'http://169.254.169.254/latest/meta-data/',
    'https://169.254.169.254/',
    'http://[fd00:ec2::254]/',
    'http://[::ffff:169.254.169.254]/',
    'http://[::ffff:10.0.0.1]/',
    'http://172.16.5.4/',
    'http://192.168.1.1/',
    'http://100.64.0.1/',
    'http://[fe80::1]/',
    'http://[fc00::1]/',
    'http://0.0.0.0/',
    'http://0xa000001/',
    'https://intranet.netns.test/realms/acme',
    'https://metadata.netns.test/',
  ]) {
    await discover('private_and_link_local', issuer);
  }
  await discover('unresolvable', 'https://no-such-host.invalid/');

  idp.close();
  const links = execFileSync('ip', ['-o', 'link', 'show']).toString();
  writeFileSync(process.env.NETNS_RESULTS!, JSON.stringify({ results, links }));
} finally {
  await platform.stop();
}
