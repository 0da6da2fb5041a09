/**
 * Run by test/integration/functions-egress-netns.test.ts inside its own empty
 * network namespace (only `lo`, which the parent brings up, and an
 * /etc/hosts that maps private.netns.test to 10.20.30.40): starts the local
 * functions host there and runs a function that tries to reach loopback,
 * private, link-local, metadata and port-80 addresses, through fetch, https
 * agents and raw sockets. Whatever the egress rule missed could only ever
 * meet an empty namespace. Also asks the egress proxy itself for odd target
 * forms. Results go to the file in NETNS_RESULTS.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEgressProxy, type EgressRefusalEvent } from '../../lib/sandbox/egress-proxy.ts';
import { call, startHost } from './functions-host.ts';

const TARGETS = [
  'https://127.0.0.1/',
  'https://10.0.0.1/',
  'https://169.254.169.254/',
  'https://[::1]/',
  'http://example.com:80/',
  'https://2130706433/',
  'https://[::ffff:127.0.0.1]/',
  'https://private.netns.test/',
  // A control: public, so the proxy lets it through (and the empty namespace around it cannot reach it).
  'https://1.1.1.1/',
];

const FUNCTION = `
import https from 'node:https';
import { Agent } from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import os from 'node:os';

const describe = (error) => ({
  name: error?.name ?? null,
  message: String(error?.message ?? error),
  cause: error?.cause ? String(error.cause.message ?? error.cause) : null,
  code: error?.code ?? error?.cause?.code ?? null,
});

const viaFetch = async (url) => {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    return { status: response.status, refused: response.headers.get('x-slipway-egress-refused'), body: (await response.text()).trim() };
  } catch (error) {
    return { error: describe(error) };
  }
};

const viaAgent = (url, agent) =>
  new Promise((resolve) => {
    const req = https.get(url, { agent, timeout: 10_000 }, (res) => {
      res.resume();
      resolve({ status: res.statusCode });
    });
    req.on('error', (error) => resolve({ error: describe(error) }));
    req.on('timeout', () => req.destroy(new Error('timeout')));
  });

const raw = (connect) =>
  new Promise((resolve) => {
    const socket = connect();
    socket.setTimeout(5_000, () => socket.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    socket.on('connect', () => { socket.destroy(); resolve({ connected: true }); });
    socket.on('secureConnect', () => { socket.destroy(); resolve({ connected: true }); });
    socket.on('error', (error) => resolve({ error: describe(error) }));
  });

export default async () => {
  const targets = ${JSON.stringify(TARGETS)};
  const fetches = {};
  for (const url of targets) fetches[url] = await viaFetch(url);
  return Response.json({
    fetches,
    userAgent: await viaAgent('https://169.254.169.254/latest/meta-data/', new Agent({ keepAlive: true })),
    globalAgent: await viaAgent('https://10.0.0.1/'),
    rawPrivate: await raw(() => net.connect(443, '10.0.0.1')),
    rawPublic: await raw(() => net.connect(443, '1.1.1.1')),
    rawTls: await raw(() => tls.connect(443, '1.1.1.1')),
    interfaces: Object.keys(os.networkInterfaces()),
  });
};
`;

/** One CONNECT straight to the proxy with a target as written. */
function rawConnect(socketPath: string, target: string): Promise<{ status: number; reason: string | null }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method: 'CONNECT', path: target });
    req.on('connect', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, reason: (res.headers['x-slipway-egress-refused'] as string | undefined) ?? null });
    });
    req.on('response', (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0, reason: (res.headers['x-slipway-egress-refused'] as string | undefined) ?? null });
    });
    req.on('error', reject);
    req.end();
  });
}

const { host, define, events } = startHost({ prefork: 1 });
const dir = mkdtempSync(join(tmpdir(), 'slipway-egress-'));
try {
  const fn = define('egress', FUNCTION);
  const { reply, text } = await call(host, fn);
  const refusals = events
    .filter((e) => e.type === 'limit' && e.kind === 'egress_refused')
    .map((e) => ({ reason: (e as EgressRefusalEvent).reason, target: (e as EgressRefusalEvent).target }));

  // The proxy on its own, with target forms no client normalizes first.
  const direct: EgressRefusalEvent[] = [];
  const proxy = await startEgressProxy({ socketPath: join(dir, 'egress.sock'), onRefused: (e) => direct.push(e) });
  const raw: Record<string, { status: number; reason: string | null }> = {};
  for (const target of [
    '2130706433:443',
    '0x7f000001:443',
    '127.1:443',
    '[::ffff:127.0.0.1]:443',
    '[::ffff:7f00:1]:443',
    '[fd00:ec2::254]:443',
    'private.netns.test:443',
    'localhost:443',
    '10.0.0.1:8443',
    '1.1.1.1:80',
    'example.com',
    'user@1.1.1.1:443',
    'no-such-host.invalid:443',
  ]) {
    raw[target] = await rawConnect(proxy.socketPath, target);
  }
  await proxy.close();

  const links = execFileSync('ip', ['-o', 'link', 'show']).toString();
  writeFileSync(
    process.env.NETNS_RESULTS!,
    JSON.stringify({
      status: reply.status,
      outcome: reply.outcome,
      seen: JSON.parse(text),
      refusals,
      raw,
      direct,
      links,
      fallbacks: host.fallbacks,
    }),
  );
} finally {
  await host.stop();
  rmSync(dir, { recursive: true, force: true });
}
