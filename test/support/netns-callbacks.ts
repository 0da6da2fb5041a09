/**
 * Run by test/integration/functions-callbacks-netns.test.ts inside its own empty network namespace (only `lo`,
 * which the parent brings up, an /etc/hosts bound from NETNS_HOSTS and a resolv.conf pointing at loopback): starts
 * the whole local platform there (moto_server included), deploys a function, and asks for completion callbacks to
 * private and metadata host names, at the POST and, for a name that moves to a private address after the POST,
 * at delivery. Whatever the check missed could only ever meet an empty namespace; the test asserts the check's
 * own refusals. Results go to the file in NETNS_RESULTS.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSession } from '../../lib/identity/credential-records.ts';
import { createUser } from '../../lib/users/user-records.ts';
import { startLocalPlatform } from '../../lib/local/platform.ts';
import { localParts } from '../../lib/local/wiring.ts';
import { setFunctionsEnrolment } from '../../lib/teams/standing.ts';
import { createTeam } from '../../lib/teams/teams.ts';
import type { TestPlatform } from './platform.ts';
import { deploy, site } from './uploads.ts';

process.env.FUNCTIONS_CALLBACK_ALLOW_LOOPBACK = '1';
process.env.FUNCTIONS_CALLBACK_RETRY_DELAYS_SECONDS = '0,0,0,0,0';
process.env.FUNCTIONS_QUEUED_RATE_PER_MINUTE = '100000';
process.env.SCREENSHOT_CAPTURE = 'off';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const hostsFile = process.env.NETNS_HOSTS!;
const originalHosts = readFileSync(hostsFile, 'utf8');

const local = await startLocalPlatform({ port: 0, prefix: 'netnscb', drivers: localParts({ synthesized: false }).drivers });
const platform = {
  ...local,
  async api(
    method: string,
    path: string,
    options: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
  ) {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let body: string | undefined = options.rawBody;
    if (options.body !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = JSON.stringify(options.body);
    }
    const res = await fetch(`${local.baseUrl}${path}`, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {}
    return { status: res.status, headers: res.headers, body: parsed as any, text };
  },
} as unknown as TestPlatform;

try {
  const owner = await createUser({ email: 'netns-callbacks@example.test', name: 'Owner' });
  const team = await createTeam({ name: 'Callbacks Namespace Team', ownerUserId: owner.user_id });
  await setFunctionsEnrolment(team.id, true);
  const token = await createSession(owner.user_id);
  const deployed = await deploy(
    platform,
    token,
    site({
      'index.html': '<p>netns</p>',
      // Slow enough for the host name to move between the POST's check and the delivery's.
      'functions/slow.js': `export default async () => { await new Promise((r) => setTimeout(r, 2000)); return new Response('done'); };`,
    }),
    { name: 'Callbacks Namespace', subdomain: 'netns-callbacks' },
  );
  const projectId = deployed.begin.project_id as string;

  const received: string[] = [];
  const receiver = createServer((req, res) => {
    received.push(req.url!);
    req.resume();
    res.writeHead(200).end();
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const port = (receiver.address() as AddressInfo).port;

  const invoke = (callbackUrl: string) =>
    platform.api('POST', '/api/v1/public/functions/netns-callbacks/slow', { rawBody: 'x', headers: { 'x-callback-url': callbackUrl } });
  const invocationCount = async () =>
    (await platform.api('GET', `/api/v1/projects/${projectId}/functions/slow/invocations`, { token })).body.data.invocations.length;
  const callbackOf = async (id: string, attempts: number) => {
    for (let i = 0; i < 600; i++) {
      const view = (await platform.api('GET', `/api/v1/projects/${projectId}/functions/slow/invocations/${id}`, { token })).body.data;
      if (view.callback.attempts >= attempts) return view.callback;
      await sleep(100);
    }
    throw new Error(`callback of ${id} never reached ${attempts} attempts`);
  };

  // At the POST: names resolved through the namespace's /etc/hosts, refused by the check itself; nothing made.
  const atPost: { url: string; status: number; code: string | null; reason: string | null }[] = [];
  for (const url of [
    'https://intranet.netns.test/hook',
    'https://metadata.netns.test/latest/meta-data/',
    `http://intranet.netns.test:${port}/hook`,
    'https://no-such-host.invalid/hook',
  ]) {
    const reply = await invoke(url);
    atPost.push({ url, status: reply.status, code: reply.body.code ?? null, reason: reply.body.details?.reason ?? null });
  }
  const invocationsAfterRefusals = await invocationCount();

  // A control on loopback: delivered, so the refusal below is the check's, not a broken setup.
  const control = await invoke(`http://rebind.netns.test:${port}/control`);
  const controlCallback = await callbackOf(control.body.data.invocation_id, 1);

  // At delivery: the name passed the POST's check on loopback, then moves to a private address before delivery.
  const moved = await invoke(`http://rebind.netns.test:${port}/moved`);
  writeFileSync(hostsFile, `${originalHosts}\n10.20.30.40 rebind.netns.test\n`.replace(/^127\.0\.0\.1 rebind\.netns\.test$/m, ''));
  const movedCallback = await callbackOf(moved.body.data.invocation_id, 6);

  receiver.close();
  const links = execFileSync('ip', ['-o', 'link', 'show']).toString();
  writeFileSync(
    process.env.NETNS_RESULTS!,
    JSON.stringify({
      links,
      atPost,
      invocationsAfterRefusals,
      control: { status: control.status, callback: controlCallback },
      moved: { status: moved.status, callback: movedCallback },
      received,
    }),
  );
} finally {
  await local.stop();
}
