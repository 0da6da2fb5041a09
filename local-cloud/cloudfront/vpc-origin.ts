import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { HOP_BY_HOP } from '../../lib/functions/runner/protocol.mjs';
import { logger } from '../../lib/logger.ts';
import type { ContainerInstances } from '../ecs/container-instances.ts';
import type { LocalLoadBalancers } from '../load-balancers/load-balancers.ts';

/**
 * A request the local CloudFront sends to a VPC origin (an internal load balancer, or an EC2 instance's port)
 * over HTTP, streamed both ways:
 * the viewer's body goes to the target while it arrives (a chunked body over 10 MiB reaches the door, which
 * refuses it while it is sent), and the reply's body goes back as the target sends it.
 */

interface ForwardedRequest {
  method: string;
  uri: string;
  headers: Record<string, { value: string }>;
  cookies: Record<string, { value: string }>;
}

interface Origin {
  target: { kind: 'load-balancer' | 'instance'; logicalId: string };
  port: number;
  readTimeoutMs: number;
}

/** Hop-by-hop headers (the door's list), and Expect, which the proxy itself answers: never passed on. */
const NOT_FORWARDED = new Set([...HOP_BY_HOP, 'expect']);

/** A reply of CloudFront's (or the load balancer's) own, in plain text. */
export function plainReply(req: IncomingMessage, res: ServerResponse, status: number, text: string): void {
  // The caller may still be sending: its body is read and dropped, so it gets this reply rather than a reset.
  req.resume();
  res.writeHead(status, { 'content-type': 'text/plain', 'content-length': String(Buffer.byteLength(text)) });
  res.end(text);
}

/** The headers the origin gets: the viewer's (after the viewer function) as the behavior forwards them, Host the origin's. */
function originHeaders(request: ForwardedRequest, forwarded: string[] | 'all-except-host', hostHeader: string, viewerIp: string) {
  const headers: OutgoingHttpHeaders = {};
  for (const [name, { value }] of Object.entries(request.headers)) {
    if (NOT_FORWARDED.has(name) || name === 'host') continue;
    if (forwarded === 'all-except-host' || forwarded.includes(name)) headers[name] = value;
  }
  const cookies = Object.entries(request.cookies).map(([name, { value }]) => `${name}=${value}`);
  if (cookies.length && forwarded === 'all-except-host') headers.cookie = cookies.join('; ');
  headers.host = hostHeader;
  headers['x-forwarded-for'] = viewerIp;
  return headers;
}

export async function forwardToVpcOrigin(
  req: IncomingMessage,
  res: ServerResponse,
  request: ForwardedRequest,
  origin: Origin,
  options: {
    forwardedHeaders: string[] | 'all-except-host';
    viewerIp: string;
    rawQuery: string;
    loadBalancers?: LocalLoadBalancers;
    instances?: ContainerInstances;
  },
): Promise<void> {
  const { target } = origin;
  const route =
    target.kind === 'instance'
      ? (options.instances?.route(target.logicalId, origin.port) ?? { kind: 'closed' as const })
      : (options.loadBalancers?.route(target.logicalId, origin.port) ?? { kind: 'no-listener' as const });
  if (route.kind === 'no-listener' || route.kind === 'closed') {
    logger.error('CloudFront could not connect to the VPC origin: nothing listens on its port', { ...origin });
    return plainReply(req, res, 502, '502 ERROR: CloudFront could not connect to the origin.');
  }
  // The load balancer's own answer when no target of the group is healthy.
  if (route.kind === 'no-healthy-target') return plainReply(req, res, 503, '503 Service Temporarily Unavailable');
  const path = `${request.uri}${options.rawQuery ? `?${options.rawQuery}` : ''}`;
  const headers = originHeaders(request, options.forwardedHeaders, route.hostHeader, options.viewerIp);
  if (target.kind === 'load-balancer') {
    // What the load balancer's HTTP listener sets on its way to the target (it also appends the previous hop to
    // X-Forwarded-For, which here is this machine's own loopback: left out). An instance origin gets CloudFront's headers only.
    headers['x-forwarded-proto'] = 'http';
    headers['x-forwarded-port'] = String(origin.port);
  }
  await new Promise<void>((resolve) => {
    const upstream = httpRequest({ host: route.host, port: route.port, method: request.method, path, headers, agent: false });
    let answered = false;
    // The origin's read timeout: no byte from the origin for this long ends the request.
    upstream.setTimeout(origin.readTimeoutMs, () => upstream.destroy(new Error('origin read timeout')));
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
      resolve();
    });
    // The origin ended its reply, or its connection, before the whole body came (the door's 413): the rest of the
    // viewer's body is read and dropped, so the viewer gets the reply rather than a reset.
    const dropRest = () => {
      if (req.complete) return;
      req.unpipe(upstream);
      req.resume();
    };
    upstream.on('response', (reply) => {
      answered = true;
      reply.on('end', dropRest);
      const replyHeaders = Object.fromEntries(Object.entries(reply.headers).filter(([name]) => !NOT_FORWARDED.has(name)));
      res.writeHead(reply.statusCode ?? 502, replyHeaders as OutgoingHttpHeaders);
      // A reply the origin cut mid-body: CloudFront cuts the viewer's connection.
      pipeline(reply, res).catch(() => res.destroy());
    });
    upstream.on('error', (error) => {
      // Once the origin answered, the reply's own stream says whether it ended (a write of the dropped body may fail).
      if (answered) return dropRest();
      const timedOut = error.message === 'origin read timeout';
      // Nothing listening on the port (an instance whose task is being replaced): CloudFront could not connect.
      const refused = (error as NodeJS.ErrnoException).code === 'ECONNREFUSED';
      plainReply(
        req,
        res,
        timedOut ? 504 : 502,
        timedOut
          ? '504 ERROR: The origin did not answer in time.'
          : refused
            ? '502 ERROR: CloudFront could not connect to the origin.'
            : '502 ERROR: the origin failed.',
      );
    });
    req.pipe(upstream);
  });
}
