import { spawn } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { doorHostname, startDoorServer, type DoorServer, type DoorServerParts } from '../../handlers/edge/functions-door-server.ts';
import { createFunctionDoor } from '../../lib/functions/door.ts';
import type { DoorForward, FunctionHost } from '../../lib/functions/host.ts';
import type { DeployedFunction } from '../../lib/functions/model.ts';
import { withEnv } from '../support/env.ts';

/**
 * The container door's server (handlers/edge/functions-door-server.ts) started in-process on the ports its
 * environment names: its health port, the door behind its door port (the lib door with a host that records what it
 * is sent, or the cloud's own door for an unknown host), and its drain on close. The last test runs the module as
 * the image runs its bundle, as a process, and sends it SIGTERM.
 */

const repoRoot = path.resolve(import.meta.dirname, '../..');
const FUNCTION_HOST = 'echo-sub.fn.slipway.site';
const LOAD_BALANCER_HOST = 'internal-slipway-door-1234.us-east-1.elb.amazonaws.com';

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** One HTTP request over its own connection; `body` as a stream is sent chunked (no Content-Length). */
function send(
  port: number,
  options: { method?: string; path?: string; headers?: Record<string, string>; body?: Buffer | Readable } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method: options.method ?? 'GET', path: options.path ?? '/', headers: options.headers, agent: false },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (chunk: Buffer) => parts.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(parts).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (options.body instanceof Readable) options.body.pipe(req);
    else req.end(options.body);
  });
}

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const fn: DeployedFunction = {
  function_id: randomUUID(),
  name: 'echo',
  project_id: randomUUID(),
  team_id: randomUUID(),
  deployment_id: randomUUID(),
  entry_path: 'functions/echo.js',
  bundle_key: 'functions/echo.mjs',
  bundle_sha256: '0'.repeat(64),
  bundle_bytes: 1,
  created_at: new Date().toISOString(),
  subdomain: 'sub',
  url: `https://${FUNCTION_HOST}/`,
};

/** The lib door resolving FUNCTION_HOST only, with a host that reads the body it is sent and answers its digest. */
function recordingDoor() {
  const forwarded: DoorForward[] = [];
  const host: FunctionHost = {
    async forwardHttp(_fn, forward) {
      forwarded.push(forward);
      const chunks: Buffer[] = [];
      for await (const chunk of forward.body ?? []) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      const digest = createHash('sha256').update(body).digest('hex');
      return {
        outcome: 'response',
        status: 200,
        headers: [['content-type', 'application/json']],
        body: Buffer.from(JSON.stringify({ bytes: body.length, sha256: digest })),
        coldStart: false,
        instanceId: 'test',
      };
    },
    runQueued: () => Promise.reject(new Error('not used')),
  };
  const door = createFunctionDoor({
    host,
    resolve: async (hostname) => (hostname === FUNCTION_HOST ? fn : null),
    isEnrolled: async () => true,
  });
  return { door, forwarded };
}

function telemetryRecorder() {
  const calls: string[] = [];
  return { calls, telemetry: { start: () => void calls.push('start'), stop: async () => void calls.push('stop') } };
}

let server: DoorServer | null = null;
beforeEach(() => {
  process.env.SLIPWAY_DOOR_PORT = '0';
  process.env.SLIPWAY_DOOR_HEALTH_PORT = '0';
});
afterEach(async () => {
  await server?.close();
  server = null;
  delete process.env.SLIPWAY_DOOR_PORT;
  delete process.env.SLIPWAY_DOOR_HEALTH_PORT;
});

describe('the container door server', () => {
  it('listens on the ports its environment names; the health port answers GET /health with 200 and nothing else', async () => {
    const [doorPort, healthPort] = [await freePort(), await freePort()];
    await withEnv({ SLIPWAY_DOOR_PORT: String(doorPort), SLIPWAY_DOOR_HEALTH_PORT: String(healthPort) }, async () => {
      server = await startDoorServer();
    });
    expect([server!.doorPort, server!.healthPort]).toEqual([doorPort, healthPort]);
    const health = await send(healthPort, { path: '/health' });
    expect([health.status, health.text]).toEqual([200, 'ok\n']);
    expect((await send(healthPort, { method: 'HEAD', path: '/health' })).status).toBe(200);
    expect((await send(healthPort, { path: '/' })).status).toBe(404);
    expect((await send(healthPort, { path: '/healthz' })).status).toBe(404);
    expect((await send(healthPort, { method: 'POST', path: '/health', body: Buffer.from('x') })).status).toBe(404);
    // The door port is the cloud's door: /health there is a function path, and a host it does not know is its 404.
    const door = await send(doorPort, { path: '/health', headers: { host: LOAD_BALANCER_HOST } });
    expect(door.status).toBe(404);
    expect(door.headers['x-scaler-http-cold-start']).toBe('false');
    expect(JSON.parse(door.text)).toMatchObject({ code: 'FUNCTION_NOT_FOUND', details: null });
  });

  it('takes the function host from x-slipway-host (CloudFront copies it), else from Host', () => {
    expect(doorHostname({ host: LOAD_BALANCER_HOST, 'x-slipway-host': FUNCTION_HOST })).toBe(FUNCTION_HOST);
    expect(doorHostname({ host: FUNCTION_HOST })).toBe(FUNCTION_HOST);
    expect(doorHostname({ host: FUNCTION_HOST, 'x-slipway-host': '' })).toBe(FUNCTION_HOST);
    expect(doorHostname({})).toBe('');
  });

  it('a 6 MiB binary body, declared or chunked, reaches the host byte for byte; the function host is x-slipway-host, the scheme https', async () => {
    const { door, forwarded } = recordingDoor();
    const { telemetry } = telemetryRecorder();
    server = await startDoorServer({ door, telemetry });
    const body = randomBytes(6 * 1024 * 1024);
    const digest = createHash('sha256').update(body).digest('hex');
    const headers = {
      host: LOAD_BALANCER_HOST,
      'x-slipway-host': FUNCTION_HOST,
      'content-type': 'application/octet-stream',
      // As the load balancer's HTTP listener sets them.
      'x-forwarded-proto': 'http',
      'x-forwarded-port': '80',
    };
    const declared = await send(server.doorPort, { method: 'POST', path: '/upload?x=1', headers, body });
    expect(declared.status).toBe(200);
    expect(JSON.parse(declared.text)).toEqual({ bytes: body.length, sha256: digest });
    const chunked = await send(server.doorPort, {
      method: 'PUT',
      headers,
      body: Readable.from([body.subarray(0, 1_000_000), body.subarray(1_000_000)]),
    });
    expect(chunked.status).toBe(200);
    expect(JSON.parse(chunked.text)).toEqual({ bytes: body.length, sha256: digest });
    expect(forwarded.map((f) => [f.method, f.query])).toEqual([
      ['POST', 'x=1'],
      ['PUT', ''],
    ]);
    // The caller spoke HTTPS to CloudFront, as the router's function URL event says.
    for (const forward of forwarded) {
      expect(forward.headers.filter(([name]) => name.startsWith('x-forwarded-p'))).toEqual([
        ['x-forwarded-proto', 'https'],
        ['x-forwarded-port', '443'],
      ]);
    }
    // With no x-slipway-host, the request's own Host names the function.
    expect((await send(server.doorPort, { headers: { host: FUNCTION_HOST } })).status).toBe(200);
    expect((await send(server.doorPort, { headers: { host: LOAD_BALANCER_HOST } })).status).toBe(404);
  });

  it("a chunked body over 10 MiB gets the door's 413 envelope, and the host is never called", async () => {
    const { door, forwarded } = recordingDoor();
    const { telemetry } = telemetryRecorder();
    server = await startDoorServer({ door, telemetry });
    const chunk = randomBytes(1024 * 1024);
    const reply = await send(server.doorPort, {
      method: 'POST',
      headers: { host: LOAD_BALANCER_HOST, 'x-slipway-host': FUNCTION_HOST },
      body: Readable.from(Array.from({ length: 11 }, () => chunk)),
    });
    expect(reply.status).toBe(413);
    expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(reply.text)).toMatchObject({
      code: 'FUNCTION_BODY_TOO_LARGE',
      error: 'The request body is over 10 MiB, the limit of a function request.',
    });
    expect(forwarded).toEqual([]);
  });

  it('on close stops accepting at once, lets the request in flight finish, then closes the health port and flushes telemetry', async () => {
    let enter!: () => void;
    const entered = new Promise<void>((resolve) => (enter = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { calls, telemetry } = telemetryRecorder();
    const parts: DoorServerParts = {
      door: {
        async answer(_request, open) {
          enter();
          await gate;
          open({ statusCode: 200, headers: { 'content-type': 'text/plain' }, cookies: [] }).end('finished');
        },
      },
      telemetry,
    };
    server = await startDoorServer(parts);
    const { doorPort, healthPort } = server;
    expect(calls).toEqual(['start']);
    const inFlight = send(doorPort, { headers: { host: FUNCTION_HOST } });
    await entered;
    let closed = false;
    const closing = server.close().then(() => (closed = true));
    await expect(send(doorPort, { headers: { host: FUNCTION_HOST } })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(closed).toBe(false);
    expect(calls).toEqual(['start']);
    release();
    expect(await inFlight).toMatchObject({ status: 200, text: 'finished' });
    await closing;
    expect(calls).toEqual(['start', 'stop']);
    await expect(send(healthPort, { path: '/health' })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    server = null;
  });

  it('cuts a request still open when the budget and its margin have passed', async () => {
    const { telemetry } = telemetryRecorder();
    server = await startDoorServer({ door: { answer: () => new Promise<void>(() => {}) }, telemetry });
    const hanging = send(server.doorPort, { headers: { host: FUNCTION_HOST } });
    hanging.catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();
    await withEnv({ FUNCTIONS_BUDGET_MS: '200' }, () => server!.close());
    const waited = Date.now() - started;
    await expect(hanging).rejects.toMatchObject({ code: 'ECONNRESET' });
    expect(waited).toBeGreaterThanOrEqual(1_100);
    server = null;
  });
});

describe('the container door as its image runs it', () => {
  it('serves /health from its environment ports, and on SIGTERM closes its ports and exits 0', { timeout: 60_000 }, async () => {
    const [doorPort, healthPort] = [await freePort(), await freePort()];
    const child = spawn(path.join(repoRoot, 'node_modules/.bin/node'), ['--import', 'tsx', 'handlers/edge/functions-door-server.ts'], {
      cwd: repoRoot,
      // The tests' LOG_LEVEL silences INFO; the door's start line is what says it listens.
      env: { ...process.env, LOG_LEVEL: 'INFO', SLIPWAY_DOOR_PORT: String(doorPort), SLIPWAY_DOOR_HEALTH_PORT: String(healthPort) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      const deadline = Date.now() + 40_000;
      while (!output.includes('container door listening')) {
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the door did not start: ${output}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect((await send(healthPort, { path: '/health' })).status).toBe(200);
      expect((await send(doorPort, { headers: { host: LOAD_BALANCER_HOST } })).status).toBe(404);
      child.kill('SIGTERM');
      expect(await exited).toEqual([0, null]);
      await expect(send(healthPort, { path: '/health' })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
