import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startEgressProxy,
  type EgressProxy,
  type EgressRefusalEvent,
  type EgressUnreachableEvent,
} from '../../lib/sandbox/egress-proxy.ts';

/**
 * The egress proxy's allowed path: a public name is resolved once, the tunnel
 * goes to the exact address checked (never resolved again), and bytes flow
 * both ways. The "internet" is an echo server on loopback that the proxy's
 * connect function is pointed at; the checks are the proxy's real ones.
 */
const dir = mkdtempSync(join(tmpdir(), 'slipway-egress-proxy-'));
let proxy: EgressProxy;
let echoPort: number;
const connects: [string, number][] = [];
const refusals: EgressRefusalEvent[] = [];
const unreachable: EgressUnreachableEvent[] = [];
/** A loopback port nothing listens on: the "internet" of a host that refuses the connection. */
let closedPort: number;
let lookups = 0;
const echo = createServer((socket) => socket.pipe(socket));

beforeAll(async () => {
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  echoPort = (echo.address() as AddressInfo).port;
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  closedPort = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  proxy = await startEgressProxy({
    socketPath: join(dir, 'egress.sock'),
    onRefused: (e) => refusals.push(e),
    onUnreachable: (e) => unreachable.push(e),
    resolve: async (hostname) => {
      lookups++;
      if (hostname === 'public.example') return [{ address: '93.184.216.34', family: 4 }];
      if (hostname === 'down.example') return [{ address: '93.184.216.35', family: 4 }];
      if (hostname === 'mixed.example')
        return [
          { address: '93.184.216.34', family: 4 },
          { address: '192.168.1.10', family: 4 },
        ];
      throw new Error('ENOTFOUND');
    },
    connectTo: (address, port) => {
      connects.push([address, port]);
      return connect(address === '93.184.216.35' ? closedPort : echoPort, '127.0.0.1');
    },
  });
});
afterAll(async () => {
  await proxy?.close();
  echo.close();
  rmSync(dir, { recursive: true, force: true });
});

function tunnel(target: string): Promise<{ status: number; socket: Socket | null; reason: string | null }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: proxy.socketPath, method: 'CONNECT', path: target });
    req.on('connect', (res, socket) =>
      resolve({
        status: res.statusCode ?? 0,
        socket: res.statusCode === 200 ? socket : (socket.destroy(), null),
        reason: (res.headers['x-slipway-egress-refused'] as string) ?? null,
      }),
    );
    req.on('error', reject);
    req.end();
  });
}

describe('egress proxy, allowed path', () => {
  it('a public name on 443 is tunnelled to the address it resolved to, bytes both ways', async () => {
    const { status, socket } = await tunnel('public.example:443');
    expect(status).toBe(200);
    socket!.write('ping through the tunnel');
    const echoed = await new Promise<string>((resolve) => socket!.once('data', (d) => resolve(String(d))));
    socket!.destroy();
    expect(echoed).toBe('ping through the tunnel');
    expect(connects).toEqual([['93.184.216.34', 443]]);
    expect(lookups).toBe(1);
  });

  it('a public IP literal is tunnelled without a lookup', async () => {
    const { status, socket } = await tunnel('1.1.1.1:443');
    socket?.destroy();
    expect(status).toBe(200);
    expect(connects.at(-1)).toEqual(['1.1.1.1', 443]);
    expect(lookups).toBe(1);
  });

  it('a name with one public and one private address is refused (any address decides)', async () => {
    const { status, reason } = await tunnel('mixed.example:443');
    expect([status, reason]).toEqual([403, 'private_address']);
    expect(refusals).toContainEqual({ reason: 'private_address', target: 'mixed.example:443' });
    expect(connects.some(([address]) => address === '192.168.1.10')).toBe(false);
  });

  it('an allowed host that refuses the connection answers 502 and is reported with the address and the error', async () => {
    const { status } = await tunnel('down.example:443');
    expect(status).toBe(502);
    expect(unreachable).toEqual([{ target: 'down.example:443', address: '93.184.216.35', error: 'ECONNREFUSED' }]);
  });

  it('plain HTTP through the proxy (absolute-form) is refused', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ socketPath: proxy.socketPath, method: 'GET', path: 'http://public.example/' }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(403);
    expect(refusals).toContainEqual({ reason: 'not_https', target: 'http://public.example/' });
  });
});
