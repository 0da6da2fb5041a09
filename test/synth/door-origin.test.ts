import { createHash, randomBytes } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { config } from '../../lib/config.ts';
import { logger } from '../../lib/logger.ts';
import { ContainerStartError } from '../../local-cloud/ecs/containers.ts';
import { startSynthesizedRuntime, type SynthesizedRuntime } from '../../local-cloud/runtime.ts';
import { mapContainerPorts } from '../../local-cloud/ecs/task-ports.ts';
import { doorRequest } from '../support/door.ts';
import { synthesizeDoorFixture } from '../fixtures/door-origin/app.ts';

/**
 * The synthesized mode's ECS services, load balancers and CloudFront VPC origins, on a small stack of the door's
 * resource types (test/fixtures/door-origin/app.ts): a Fargate service of 2 tasks from a Docker image asset behind
 * an internal ALB, a VPC origin for the ALB, and a viewer function that selects it by id for a POST without
 * Content-Length or with one over 4 MiB; and the door's default shape, an EC2 service of one task on a container
 * instance whose VPC origin `door-instance` the viewer function selects on the test's header. The tasks run from the
 * image asset (containers.ts); the distribution is reached through the runtime's own hostname handler on a server of
 * this test.
 */
process.env.LOCAL_ECS_STOP_TIMEOUT_SECONDS = '1';

let dir: string;
let runtime: SynthesizedRuntime;
let server: Server;
let port: number;
const HOST = `echo-sub.${config.functionDomain()}`;
const MiB = 1024 * 1024;

const sha = (body: Buffer) => createHash('sha256').update(body).digest('hex');
const post = (body: Buffer, headers: Record<string, string> = {}, path = '/') =>
  doorRequest(port, HOST, path, { method: 'POST', body, headers });
const doorTasks = () =>
  runtime.ecs.tasks().filter((task) => task.taskDefinitionArn.includes('DoorTask') && !task.taskDefinitionArn.includes('InstanceDoorTask'));
const instanceTasks = () => runtime.ecs.tasks().filter((task) => task.taskDefinitionArn.includes('InstanceDoorTask'));

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'slipway-door-fixture-'));
  synthesizeDoorFixture(dir);
  runtime = await startSynthesizedRuntime({
    assemblyDir: dir,
    endpoint: inject('awsEndpoint'),
    region: 'us-east-1',
    prefix: `t${randomBytes(5).toString('hex')}`,
  });
  const [functionHost] = runtime.hostnameHandlers;
  server = createServer((req, res) => {
    void Promise.resolve(functionHost!(req, res)).then((handled) => handled || res.writeHead(404).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
}, 120_000);

afterAll(async () => {
  server?.close();
  // The last test stopped it, unless a failure came first.
  if (runtime && [...doorTasks(), ...instanceTasks()].some((task) => task.lastStatus !== 'STOPPED')) await runtime.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('ECS services: the service scheduler', () => {
  it('the start waited for the service: its desiredCount of 2 tasks run, started by the service', () => {
    const running = doorTasks().filter((task) => task.lastStatus === 'RUNNING');
    expect(running).toHaveLength(2);
    for (const task of running) expect(task.startedBy).toMatch(/^ecs-svc\//);
    // What the banner lists: each task with the loopback port of each container port.
    const service = runtime.ecs.services().find((s) => s.name.endsWith('FunctionsDoorService723F50CE'));
    expect(service).toMatchObject({ name: 'DoorFixture-FunctionsDoorService723F50CE', desiredCount: 2 });
    expect(service!.family).toMatch(/DoorTask/);
    expect(service!.tasks.map((task) => task.ports.map((p) => p.containerPort))).toEqual([
      [8080, 8081],
      [8080, 8081],
    ]);
  });

  it('a stopped task is replaced, and the load balancer sends nothing more to it', async () => {
    const [first] = doorTasks().filter((task) => task.lastStatus === 'RUNNING');
    const stopped = await ecsCall('StopTask', { cluster: first!.clusterArn, task: first!.taskArn, reason: 'test' });
    expect(stopped.task.desiredStatus).toBe('STOPPED');
    await vi.waitFor(
      () => {
        expect(doorTasks().find((task) => task.taskArn === first!.taskArn)!.lastStatus).toBe('STOPPED');
        expect(doorTasks().filter((task) => task.lastStatus === 'RUNNING')).toHaveLength(2);
      },
      { timeout: 20_000, interval: 100 },
    );
    // Every request is answered by a task that runs, once the new one passed its health check.
    await vi.waitFor(async () => expect((await post(Buffer.alloc(5 * MiB))).status).toBe(200), { timeout: 20_000, interval: 200 });
    for (let i = 0; i < 6; i++) expect((await post(Buffer.alloc(5 * MiB, i))).status).toBe(200);
  }, 60_000);
});

describe('CloudFront: origin selection by the viewer function', () => {
  it('a GET and a small POST go to the function URL, through the viewer function (x-slipway-host)', async () => {
    for (const reply of [await doorRequest(port, HOST), await post(Buffer.from('small'))]) {
      expect(reply.status).toBe(200);
      expect(JSON.parse(reply.text)).toMatchObject({ origin: 'function-url', forwardedHost: HOST });
    }
  });

  it('a 6 MiB and a 10 MiB binary body reach the selected VPC origin whole; Host is the load balancer name', async () => {
    for (const size of [6 * MiB, 10 * MiB]) {
      const body = randomBytes(size);
      const reply = await post(body, { 'content-type': 'application/octet-stream' }, '/path?q=1');
      expect(reply.status).toBe(200);
      expect(JSON.parse(reply.text)).toMatchObject({
        method: 'POST',
        url: '/path?q=1',
        host: expect.stringMatching(/^internal-functionsdoorbalancer[0-9a-f]*-\d+\.us-east-1\.elb\.amazonaws\.com$/),
        forwardedHost: HOST,
        // CloudFront's X-Forwarded-For, the HTTP listener's X-Forwarded-Proto and X-Forwarded-Port.
        forwarded: ['127.0.0.1', 'http', '80'],
        logLevel: 'CRITICAL',
        length: size,
        sha256: sha(body),
      });
    }
  }, 60_000);

  it('requests are spread over the healthy targets', async () => {
    const replies = await Promise.all(Array.from({ length: 8 }, (_, i) => post(Buffer.alloc(5 * MiB, i))));
    expect(new Set(replies.map((reply) => JSON.parse(reply.text).task)).size).toBe(2);
  }, 60_000);

  it('a chunked body is streamed to the origin as it is sent: over 10 MiB, its 413 comes back while the body is sent', async () => {
    const body = randomBytes(10 * MiB);
    const chunked = await post(body, { 'transfer-encoding': 'chunked' });
    expect(JSON.parse(chunked.text)).toMatchObject({ transferEncoding: 'chunked', length: 10 * MiB, sha256: sha(body) });
    const over = await post(Buffer.alloc(10 * MiB + 1, 7), { 'transfer-encoding': 'chunked' });
    expect(over.status).toBe(413);
    expect(JSON.parse(over.text)).toEqual({ code: 'FUNCTION_BODY_TOO_LARGE' });
  }, 60_000);

  it('the body reaches the origin while it is sent, and the reply comes back while the origin sends it', async () => {
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/first-chunk',
      headers: { host: HOST, 'transfer-encoding': 'chunked' },
      agent: false,
    });
    const reply = new Promise<IncomingMessage>((resolve, reject) => req.on('response', resolve).on('error', reject));
    req.write(Buffer.alloc(1000, 1));
    // The request is still open: the origin has its first chunk, and its first words are back.
    const res = await reply;
    expect(res.statusCode).toBe(200);
    const first = await new Promise<string>((resolve) => res.once('data', (chunk: Buffer) => resolve(chunk.toString())));
    expect(first).toBe('first chunk: 1000 bytes;');
    req.end(Buffer.alloc(1000, 2));
    let rest = '';
    for await (const chunk of res) rest += chunk;
    expect(rest).toBe('body ended');
  });

  it('an origin id the distribution does not have fails the function: 503, and a log line that names it', async () => {
    const logged = vi.spyOn(logger, 'error');
    const reply = await doorRequest(port, HOST, '/', { headers: { 'x-fixture-origin': 'nosuch' } });
    expect(reply.status).toBe(503);
    expect(reply.text).toBe('503 ERROR: The CloudFront function associated with the CloudFront distribution is invalid or could not run.');
    expect(logged).toHaveBeenCalledWith('The CloudFront function failed: the viewer gets 503', {
      distribution: 'Functions/Distribution/Resource',
      error: 'selectRequestOriginById: "nosuch" is not an origin of this distribution',
    });
    logged.mockRestore();
  });
});

describe("a service task's AWS calls: through the IAM proxy, as its task role", () => {
  it('allowed where the task role grants it, refused elsewhere, and counted in the permission report', async () => {
    const granted = JSON.parse((await doorRequest(port, HOST, '/aws', { headers: { 'x-fixture-origin': 'door' } })).text);
    expect(granted.status).toBe(200);
    const denied = JSON.parse((await doorRequest(port, HOST, '/aws-denied', { headers: { 'x-fixture-origin': 'door' } })).text);
    expect(denied.status).toBe(403);
    expect(denied.text).toMatch(/DoorTaskTaskRole[^/]*\/\S*DoorTask\S* is not authorized to perform: s3:ListBucket/);
    const usage = runtime.usage().find((entry) => entry.functionName.includes('DoorTask') && !entry.functionName.includes('Instance'));
    expect(usage?.actionsUsed).toContain('s3:ListBucket');
  });
});

describe('a VPC origin of an EC2 instance: the door on a container instance', () => {
  const toInstance = (body: Buffer, headers: Record<string, string> = {}) =>
    post(body, { 'x-fixture-origin': 'door-instance', ...headers });

  it("the start waited for the instance's service: its one task runs on the instance that joined its cluster by user data", () => {
    const running = instanceTasks().filter((task) => task.lastStatus === 'RUNNING');
    expect(running).toHaveLength(1);
    expect(running[0]!.startedBy).toMatch(/^ecs-svc\/.*InstanceDoorService/);
    expect(running[0]!.clusterArn).toMatch(/cluster\/DoorFixture-FunctionsInstanceCluster/);
  });

  it("6 MiB declared and 10 MiB chunked reach the task at the instance's port, Host the instance's private DNS name", async () => {
    const six = randomBytes(6 * MiB);
    const declared = JSON.parse((await toInstance(six)).text);
    expect(declared).toMatchObject({ method: 'POST', length: six.length, sha256: sha(six), forwardedHost: HOST });
    expect(declared.host).toMatch(/^ip-10-40-\d+-\d+\.ec2\.internal$/);
    // No load balancer on the way: none of its X-Forwarded-Proto and -Port.
    expect(declared.forwarded).toEqual(['127.0.0.1', null, null]);
    const ten = randomBytes(10 * MiB);
    const reply = await toInstance(ten, { 'transfer-encoding': 'chunked' });
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.text)).toMatchObject({ transferEncoding: 'chunked', length: ten.length, sha256: sha(ten) });
    // Every request went to the one task.
    expect(declared.task).toBe(JSON.parse(reply.text).task);
  });

  it('while its task is replaced, CloudFront cannot connect (502); the new task answers at the same port', async () => {
    const [task] = instanceTasks().filter((t) => t.lastStatus === 'RUNNING');
    await ecsCall('StopTask', { cluster: task!.clusterArn, task: task!.taskArn, reason: 'test' });
    await vi.waitFor(() => expect(instanceTasks().find((t) => t.taskArn === task!.taskArn)!.lastStatus).toBe('STOPPED'), {
      timeout: 20_000,
      interval: 50,
    });
    const during = await toInstance(Buffer.from('x'.repeat(5 * MiB)));
    if (during.status !== 200) {
      expect(during.status).toBe(502);
      expect(during.text).toBe('502 ERROR: CloudFront could not connect to the origin.');
    }
    await vi.waitFor(async () => expect((await toInstance(Buffer.alloc(5 * MiB))).status).toBe(200), { timeout: 20_000, interval: 100 });
    expect(instanceTasks().filter((t) => t.lastStatus === 'RUNNING')).toHaveLength(1);
  }, 60_000);
});

describe('task ports: the tasks share this machine network', () => {
  const definition = { Name: 'door', PortMappings: [{ ContainerPort: 8080 }] };

  it('each mapped container port gets a free loopback port, set in the one variable that held it', async () => {
    const environment = { DOOR_PORT: '8080', OTHER: 'x' };
    const ports = await mapContainerPorts(definition, environment);
    expect(ports.get(8080)).toBe(Number(environment.DOOR_PORT));
    expect(ports.get(8080)).not.toBe(8080);
    expect(environment.OTHER).toBe('x');
  });

  it('refuses a mapped port that no variable or two variables hold', async () => {
    for (const [environment, names] of [
      [{ A: '1' }, '0 variables of its environment hold 8080 (none)'],
      [{ A: '8080', B: '8080' }, '2 variables of its environment hold 8080 (A, B)'],
    ] as const) {
      const error = await mapContainerPorts(definition, { ...environment }).catch((e: Error) => e);
      expect(error).toBeInstanceOf(ContainerStartError);
      expect((error as Error).message).toContain(`port mapping 8080 of container door: ${names}`);
    }
  });
});

describe('the platform stops', () => {
  it('its service tasks stop, and the scheduler replaces none of them', async () => {
    await runtime.stop();
    const stoppedAt = doorTasks().length;
    expect([...doorTasks(), ...instanceTasks()].every((task) => task.lastStatus === 'STOPPED')).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(doorTasks()).toHaveLength(stoppedAt);
  });
});

/** A call to the local ECS as the service itself (a test's, not a role's: StopTask of a service task). */
async function ecsCall(operation: string, input: object): Promise<any> {
  const direct = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => void runtime.ecs.handle(req, res, Buffer.concat(chunks)));
  });
  await new Promise<void>((resolve) => direct.listen(0, '127.0.0.1', resolve));
  try {
    const reply = await fetch(`http://127.0.0.1:${(direct.address() as AddressInfo).port}/`, {
      method: 'POST',
      headers: { 'x-amz-target': `AmazonEC2ContainerServiceV20141113.${operation}`, 'content-type': 'application/x-amz-json-1.1' },
      body: JSON.stringify(input),
    });
    return await reply.json();
  } finally {
    direct.close();
  }
}
