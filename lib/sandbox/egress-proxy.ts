import { chmod, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { checkIssuerAddress, type AddressRefusal, type Resolver } from '../sso/address-guard.ts';

/**
 * The functions' egress proxy: an HTTP CONNECT proxy on a path-based unix
 * socket (which crosses network namespaces), run by the platform. A sandboxed
 * instance has an empty network namespace; its runner bridges a loopback port
 * to this socket and Node sends fetch, https.get and https agents through it.
 *
 * The spec's outbound rule: HTTPS to the public internet only. CONNECT to
 * port 443 only; the target is parsed with WHATWG URL rules (so 2130706433,
 * 0x7f000001 and 127.1 are 127.0.0.1), resolved here once, refused when ANY
 * resolved address is not public (address-guard's classifyAddress, loopback
 * not allowed), and the tunnel goes to the exact address that was checked.
 * A plain-HTTP proxy request (absolute-form GET http://...) is refused too.
 * A refusal is a 403 with a short reason, reported to `onRefused`.
 */
export type EgressRefusal = AddressRefusal | 'port_not_allowed' | 'not_https' | 'bad_target' | 'unresolvable';

export const egressRefusalMessages: Record<EgressRefusal, string> = {
  port_not_allowed: 'Outbound connections are allowed to port 443 (HTTPS) only.',
  not_https: 'Outbound plain HTTP is not allowed; use HTTPS.',
  bad_target: 'The proxy target is not a host name and port.',
  unresolvable: 'The host name does not resolve.',
  metadata_address: 'The host resolves to a cloud metadata address, which is blocked.',
  loopback_address: 'The host resolves to a loopback address, which is blocked.',
  private_address: 'The host resolves to a private network address, which is blocked.',
  link_local_address: 'The host resolves to a link-local address, which is blocked.',
  unspecified_address: 'The host resolves to an unspecified address, which is blocked.',
  multicast_address: 'The host resolves to a multicast or broadcast address, which is blocked.',
  reserved_address: 'The host resolves to a reserved address, which is blocked.',
};

export const UPSTREAM_CONNECT_TIMEOUT_MS = 15_000;

/** The response header that names the refusal reason. */
export const EGRESS_REFUSAL_HEADER = 'x-slipway-egress-refused';

export interface EgressRefusalEvent {
  reason: EgressRefusal;
  /** The target as the client asked for it (`host:port`, or the absolute URL). */
  target: string;
}

/** An allowed target that could not be reached: the client heard 502. */
export interface EgressUnreachableEvent {
  target: string;
  /** The checked address the tunnel was to go to. */
  address: string;
  /** What went wrong, in a few words (`connect timeout`, `ECONNREFUSED` ...). */
  error: string;
}

export interface EgressProxyOptions {
  socketPath: string;
  onRefused?: (event: EgressRefusalEvent) => void;
  /** A build's log says why its connection failed (lib/local/builds/); functions leave it unset. */
  onUnreachable?: (event: EgressUnreachableEvent) => void;
  /** Name resolution (tests); the system resolver by default. */
  resolve?: Resolver;
  /** Connects to the checked address (tests); net.connect by default. */
  connectTo?: (address: string, port: number) => Socket;
}

export interface EgressProxy {
  socketPath: string;
  close(): Promise<void>;
}

/** Where a CONNECT target may go: the checked address, or why not. */
export async function checkEgressTarget(
  target: string,
  resolve?: Resolver,
): Promise<{ ok: true; address: string; port: number } | { ok: false; reason: EgressRefusal }> {
  const match = /^(\[[^\]]*\]|[^:\s/\\@?#[\]]+):(\d{1,5})$/.exec(target);
  if (!match) return { ok: false, reason: 'bad_target' };
  const port = Number(match[2]);
  if (port !== 443) return { ok: false, reason: 'port_not_allowed' };
  let url: URL;
  try {
    url = new URL(`https://${match[1]}/`);
  } catch {
    return { ok: false, reason: 'bad_target' };
  }
  if (url.pathname !== '/' || url.username || url.password) return { ok: false, reason: 'bad_target' };
  const check = await checkIssuerAddress(url, { allowLoopbackHttp: false, resolve });
  if (check.ok) return { ok: true, address: check.addresses[0]!.address, port };
  if ('unresolvable' in check) return { ok: false, reason: 'unresolvable' };
  const refusal = check.refusal;
  const isAddress = refusal in egressRefusalMessages;
  return { ok: false, reason: isAddress ? (refusal as EgressRefusal) : 'bad_target' };
}

function refuse(socket: Duplex, reason: EgressRefusal): void {
  const body = `${egressRefusalMessages[reason]}\n`;
  socket.end(
    `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain; charset=utf-8\r\n${EGRESS_REFUSAL_HEADER}: ${reason}\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

export async function startEgressProxy(options: EgressProxyOptions): Promise<EgressProxy> {
  const report = (reason: EgressRefusal, target: string) => {
    try {
      options.onRefused?.({ reason, target });
    } catch {
      // A telemetry callback never breaks the proxy.
    }
  };
  const connectTo = options.connectTo ?? ((address: string, port: number) => connect({ host: address, port }));
  const server = createServer((req, res) => {
    // Absolute-form plain HTTP (HTTP_PROXY): never forwarded.
    report('not_https', req.url ?? '');
    res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8', [EGRESS_REFUSAL_HEADER]: 'not_https', connection: 'close' });
    res.end(`${egressRefusalMessages.not_https}\n`);
    req.resume();
  });
  const tunnels = new Set<Duplex>();
  server.on('connect', (req: IncomingMessage, client: Duplex, head: Buffer) => {
    const target = req.url ?? '';
    tunnels.add(client);
    client.on('close', () => tunnels.delete(client));
    client.on('error', () => client.destroy());
    void checkEgressTarget(target, options.resolve).then(
      (check) => {
        if (!check.ok) {
          report(check.reason, target);
          return refuse(client, check.reason);
        }
        const upstream = connectTo(check.address, check.port);
        // A target that never answers: the client hears 502 rather than waiting for the OS.
        upstream.setTimeout(UPSTREAM_CONNECT_TIMEOUT_MS, () => upstream.destroy(new Error('connect timeout')));
        upstream.once('connect', () => {
          upstream.setTimeout(0);
          client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
          if (head.length > 0) upstream.write(head);
          upstream.pipe(client);
          client.pipe(upstream);
        });
        upstream.on('error', (error: NodeJS.ErrnoException) => {
          if (!client.destroyed && client.writable && upstream.readyState !== 'open') {
            try {
              options.onUnreachable?.({ target, address: check.address, error: error.code ?? error.message });
            } catch {
              // As for refusals: a callback never breaks the proxy.
            }
            client.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
          } else client.destroy();
        });
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      },
      () => client.destroy(),
    );
  });
  server.on('clientError', (_error, socket) => socket.destroy());

  await rm(options.socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.socketPath, () => resolve());
  });
  // The sandboxed runner (another user) connects: a unix socket needs write permission.
  await chmod(options.socketPath, 0o666);
  return {
    socketPath: options.socketPath,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        for (const tunnel of tunnels) tunnel.destroy();
      }),
  };
}
