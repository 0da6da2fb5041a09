import { once } from 'node:events';
import * as http from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { config } from '../../lib/config.ts';
import type { DoorRequest, FunctionDoor } from '../../lib/functions/door.ts';
import { doorRequestOfIncoming, openNodeReply } from '../../lib/functions/door-http.ts';
import { createCloudDoor } from '../../lib/functions/hosts/cloud/cloud-door.ts';
import { functionBudgetMs } from '../../lib/functions/model.ts';
import type { FunctionTelemetry } from '../../lib/functions/telemetry.ts';
import { logger } from '../../lib/logger.ts';
import { SITE_HOST_HEADER } from '../../lib/sites/serve.ts';

/**
 * The container door (docs/functions.md, "The container door"): the same HTTPS door and cloud host as the router
 * Lambda, in a plain Node HTTP server on Fargate behind an internal load balancer that CloudFront reaches through a
 * VPC origin. CloudFront's viewer function sends it the requests whose body may be too large for the router's
 * function URL (6 MB event, binary bodies base64): a declared body over 4 MiB, or one without a Content-Length. The
 * request stream is the door's body as it arrives, so a chunked body over 10 MiB is counted and refused (413) while
 * it arrives, and nothing is buffered here.
 *
 * Door traffic on SLIPWAY_DOOR_PORT; the load balancer's health check on SLIPWAY_DOOR_HEALTH_PORT (`GET /health`,
 * nothing else). SIGTERM stops accepting, lets requests in flight finish within the door's budget, flushes
 * telemetry and exits 0.
 */

export interface DoorServer {
  doorPort: number;
  healthPort: number;
  /** Stops accepting, waits for requests in flight (at most the door's budget and a little), flushes telemetry. */
  close(): Promise<void>;
}

/**
 * The door's own timer ends every request at its budget (a 504, or the stream cut); past it and this margin, a
 * connection still open is cut.
 */
const DRAIN_MARGIN_MS = 1_000;

/** What the server runs: the cloud's door and its telemetry (createCloudDoor); a test may hand in its own. */
export interface DoorServerParts {
  door: Pick<FunctionDoor, 'answer'>;
  telemetry: Pick<FunctionTelemetry, 'start' | 'stop'>;
}

/** The function's host as the viewer sent it: CloudFront's viewer function copies it, since the load balancer's Host is its own. */
export function doorHostname(headers: IncomingHttpHeaders): string {
  const forwarded = headers[SITE_HOST_HEADER];
  return (typeof forwarded === 'string' && forwarded) || headers.host || '';
}

function healthServer(): http.Server {
  return http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const status = (req.method === 'GET' || req.method === 'HEAD') && path === '/health' ? 200 : 404;
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
    res.end(status === 200 ? 'ok\n' : 'not found\n');
  });
}

async function listen(server: http.Server, port: number): Promise<number> {
  server.listen(port);
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

/**
 * The load balancer's listener is HTTP, so it sets `x-forwarded-proto: http` and `x-forwarded-port: 80`; the caller
 * spoke HTTPS to CloudFront (the distribution redirects plain HTTP), as the router's function URL event says.
 */
function asViewerSentIt(request: DoorRequest): DoorRequest {
  const viewer: Record<string, string> = { 'x-forwarded-proto': 'https', 'x-forwarded-port': '443' };
  return { ...request, headers: request.headers.map(([name, value]) => [name, viewer[name] ?? value]) };
}

/** Starts both servers on the configured ports (0: any free one) and flushes telemetry on a timer. */
export async function startDoorServer({ door, telemetry }: DoorServerParts = createCloudDoor()): Promise<DoorServer> {
  let inFlight = 0;
  const idle: (() => void)[] = [];
  const doorServer = http.createServer((req, res) => {
    inFlight++;
    door
      .answer(asViewerSentIt(doorRequestOfIncoming(req, res, doorHostname(req.headers))), openNodeReply(res))
      .catch((error: unknown) => {
        logger.error('container door: a request failed outside the door', { error: String(error) });
        if (!res.headersSent) res.writeHead(502).end();
        else res.destroy();
      })
      .finally(() => {
        if (--inFlight === 0) for (const resolve of idle.splice(0)) resolve();
      });
  });
  // The load balancer keeps connections open up to its idle timeout (75 s); ours outlasts it, so it never reuses one we closed.
  doorServer.keepAliveTimeout = 80_000;
  doorServer.headersTimeout = 85_000;
  // The door's own timer bounds a request; Node's default 300 s request timeout must not cut a slow upload first.
  doorServer.requestTimeout = 0;
  const health = healthServer();
  const doorPort = await listen(doorServer, config.doorPort());
  const healthPort = await listen(health, config.doorHealthPort());
  telemetry.start();

  let closing: Promise<void> | null = null;
  const drain = async () => {
    const stopped = new Promise<void>((resolve) => doorServer.close(() => resolve()));
    doorServer.closeIdleConnections();
    const drained = inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => idle.push(resolve));
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, functionBudgetMs() + DRAIN_MARGIN_MS);
    });
    await Promise.race([drained, deadline]);
    clearTimeout(timer);
    doorServer.closeAllConnections();
    await stopped;
    await new Promise<void>((resolve) => health.close(() => resolve()));
    health.closeAllConnections();
    await telemetry.stop();
  };
  return {
    doorPort,
    healthPort,
    close: () => (closing ??= drain()),
  };
}

/** Run as the image's entry (`node /door/index.mjs`): serve until SIGTERM, then drain and exit 0. */
async function main(): Promise<void> {
  const server = await startDoorServer();
  logger.info('container door listening', { doorPort: server.doorPort, healthPort: server.healthPort });
  const stop = () => {
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error('container door: the drain failed', { error: String(error) });
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    logger.error('container door: could not start', { error: String(error) });
    process.exit(1);
  });
}
