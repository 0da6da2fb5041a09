import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeTasksCommand, ECSClient, RunTaskCommand, StopTaskCommand, type Task } from '@aws-sdk/client-ecs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stoppedTaskOutcome } from '../../lib/functions/hosts/cloud/queued-task.ts';
import { probeSandbox } from '../../lib/sandbox/capabilities.ts';
import { ContainerStartError, startContainer } from '../../local-cloud/ecs/containers.ts';
import { accessKeyIdOf } from '../../local-cloud/lambda/lambdas.ts';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';

/**
 * The synthesized mode's local ECS (local-cloud/ecs/ecs-service.ts) and its containers (containers.ts): the
 * template's Fargate task definition run from its image asset, through the IAM proxy with the invocations
 * worker's keys as the worker calls it, and ECS's states, stop codes and errors. The task's presigned URLs
 * point at a server of this test, which plays the bucket.
 */
process.env.LOCAL_ECS_STOP_TIMEOUT_SECONDS = '1';

let platform: TestPlatform;
let ecs: ECSClient;
let direct: ECSClient;
let directServer: Server;
let bucket: Server;
let bucketUrl: string;
const objects = new Map<string, Buffer>();
let worker: { cluster: string; taskDefinition: string; subnets: string[] };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

/** The environment the worker gives the runner container, its URLs on this test's bucket under `key`. */
function taskEnvironment(key: string, handler: string) {
  objects.set(`${key}/bundle`, Buffer.from(handler));
  objects.set(`${key}/request`, Buffer.from(JSON.stringify({ method: 'GET', query: '', headers: [], body: '' })));
  return [
    { name: 'SLIPWAY_BUNDLE_URL', value: `${bucketUrl}/${key}/bundle` },
    { name: 'SLIPWAY_REQUEST_URL', value: `${bucketUrl}/${key}/request` },
    { name: 'SLIPWAY_RESULT_URL', value: `${bucketUrl}/${key}/result` },
    { name: 'SLIPWAY_CONSOLE_URL', value: `${bucketUrl}/${key}/console` },
    { name: 'SLIPWAY_FUNCTION_URL', value: 'https://fn.example/' },
  ];
}

async function runTask(client: ECSClient, environment: { name: string; value: string }[], extra: object = {}) {
  return client.send(
    new RunTaskCommand({
      cluster: worker.cluster,
      taskDefinition: worker.taskDefinition,
      launchType: 'FARGATE',
      count: 1,
      networkConfiguration: { awsvpcConfiguration: { subnets: worker.subnets, assignPublicIp: 'DISABLED' } },
      overrides: { containerOverrides: [{ name: 'runner', environment }] },
      ...extra,
    }),
  );
}

async function describeTask(taskArn: string): Promise<Task> {
  return (await ecs.send(new DescribeTasksCommand({ cluster: worker.cluster, tasks: [taskArn] }))).tasks![0]!;
}

async function untilStatus(taskArn: string, status: string, timeoutMs = 20_000): Promise<Task> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const task = await describeTask(taskArn);
    if (task.lastStatus === status) return task;
    if (Date.now() > deadline) throw new Error(`task still ${task.lastStatus}`);
    await sleep(50);
  }
}

beforeAll(async () => {
  platform = await startTestPlatform();
  bucket = createServer((req, res) => {
    const key = req.url!.slice(1);
    if (req.method === 'GET') {
      const object = objects.get(key);
      res.writeHead(object ? 200 : 404).end(object);
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      objects.set(key, Buffer.concat(chunks));
      res.writeHead(200).end();
    });
  });
  bucketUrl = await listen(bucket);
  const host = [...platform.synthesized!.hosts.values()].find((h) => h.fn.environment.FUNCTIONS_TASK_DEFINITION_ARN)!;
  worker = {
    cluster: host.fn.environment.FUNCTIONS_TASK_CLUSTER!,
    taskDefinition: host.fn.environment.FUNCTIONS_TASK_DEFINITION_ARN!,
    subnets: host.fn.environment.FUNCTIONS_SUBNET_IDS!.split(','),
  };
  // As the worker calls it: its own keys, through the IAM proxy.
  ecs = new ECSClient({
    endpoint: platform.synthesized!.awsEndpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: accessKeyIdOf(host.fn.name), secretAccessKey: 'local' },
  });
  // The service itself, for what the worker's grants would not let through (another cluster).
  const service = platform.synthesized!.ecs;
  directServer = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => void service.handle(req, res, Buffer.concat(chunks)));
  });
  direct = new ECSClient({
    endpoint: await listen(directServer),
    region: 'us-east-1',
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
  });
}, 180_000);

afterAll(async () => {
  ecs?.destroy();
  direct?.destroy();
  directServer?.close();
  bucket?.close();
  await platform?.stop();
});

describe('the local ECS: the template task definition run from its image asset', () => {
  it('RunTask answers PROVISIONING; the task walks to RUNNING with startedAt, then STOPPED: exit 0, EssentialContainerExited', async () => {
    const started = await runTask(ecs, taskEnvironment('ok', 'export default () => new Response("done", { status: 201 });'), {
      startedBy: 'invocation-ok',
    });
    const task = started.tasks![0]!;
    expect(started.failures).toEqual([]);
    expect(task).toMatchObject({ lastStatus: 'PROVISIONING', desiredStatus: 'RUNNING', launchType: 'FARGATE', startedBy: 'invocation-ok' });
    expect(task.taskArn).toMatch(new RegExp(`^arn:aws:ecs:us-east-1:123456789012:task/${worker.cluster.split('/').pop()}/[0-9a-f]{32}$`));
    const stopped = await untilStatus(task.taskArn!, 'STOPPED');
    expect(stopped.startedAt).toBeInstanceOf(Date);
    expect(stopped).toMatchObject({ stopCode: 'EssentialContainerExited', stoppedReason: 'Essential container in task exited' });
    expect(stopped.containers).toEqual([expect.objectContaining({ name: 'runner', exitCode: 0, lastStatus: 'STOPPED' })]);
    expect(JSON.parse(objects.get('ok/result')!.toString())).toMatchObject({ status: 201, outcome: 'response' });
    expect(Buffer.from(JSON.parse(objects.get('ok/result')!.toString()).body, 'base64').toString()).toBe('done');
  });

  it('StopTask sends SIGTERM: the entry uploads the console and exits 143; STOPPED with UserInitiated and the reason given', async () => {
    const environment = taskEnvironment(
      'slow',
      'export default async () => { console.log("waiting"); await new Promise((r) => setTimeout(r, 60000)); };',
    );
    const { taskArn } = (await runTask(ecs, environment)).tasks![0]!;
    await untilStatus(taskArn!, 'RUNNING');
    await sleep(1500);
    const reply = await ecs.send(
      new StopTaskCommand({ cluster: worker.cluster, task: taskArn, reason: 'Slipway: the invocation reached its time budget' }),
    );
    expect(reply.task?.desiredStatus).toBe('STOPPED');
    const stopped = await untilStatus(taskArn!, 'STOPPED');
    expect(stopped).toMatchObject({ stopCode: 'UserInitiated', stoppedReason: 'Slipway: the invocation reached its time budget' });
    expect(stopped.containers![0]!.exitCode).toBe(143);
    expect(JSON.parse(objects.get('slow/console')!.toString())).toContainEqual(expect.objectContaining({ line: 'waiting' }));
    expect(objects.has('slow/result')).toBe(false);
  }, 30_000);

  it("past the task's 512 MiB the container is killed for memory: exit 137 and ECS's OutOfMemoryError (the worker's out_of_memory)", async () => {
    const hog =
      'export default () => { const kept = []; for (let i = 0; i < 48; i++) kept.push(Buffer.alloc(16 * 1024 * 1024, i + 1)); ' +
      'return new Response("survived"); };';
    const { taskArn } = (await runTask(ecs, taskEnvironment('hog', hog))).tasks![0]!;
    const stopped = await untilStatus(taskArn!, 'STOPPED', 30_000);
    expect(stopped.containers![0]).toMatchObject({ exitCode: 137, reason: 'OutOfMemoryError: Container killed due to memory usage' });
    expect(stoppedTaskOutcome(stopped)).toBe('out_of_memory');
    expect(objects.has('hog/result')).toBe(false);
  }, 40_000);

  it("RunTask's checks, with ECS's error names: cluster, launch type or capacity provider, awsvpc network configuration, overrides size and names", async () => {
    const environment = taskEnvironment('never', 'export default () => new Response("x");');
    const error = (promise: Promise<unknown>) =>
      promise.then(
        () => null,
        (e: Error & { name: string }) => ({ name: e.name, message: e.message }),
      );
    expect(await error(runTask(direct, environment, { cluster: 'nosuch' }))).toEqual({
      name: 'ClusterNotFoundException',
      message: 'Cluster not found.',
    });
    expect(await error(runTask(direct, environment, { launchType: 'EC2' }))).toEqual({
      name: 'InvalidParameterException',
      message: 'Task definition does not support launch_type EC2.',
    });
    // A capacity provider instead of the launch type (the warm pool's FARGATE_SPOT): never both, and only one the
    // template associates with the cluster.
    const spot = [{ capacityProvider: 'FARGATE_SPOT', weight: 1 }];
    expect(await error(runTask(direct, environment, { capacityProviderStrategy: spot }))).toEqual({
      name: 'InvalidParameterException',
      message: 'Specifying both a launch type and capacity provider strategy is not supported.',
    });
    expect(
      await error(runTask(direct, environment, { launchType: undefined, capacityProviderStrategy: [{ capacityProvider: 'MY_ASG' }] })),
    ).toEqual({
      name: 'InvalidParameterException',
      message: 'The specified capacity provider MY_ASG is not associated with the cluster.',
    });
    expect(await error(runTask(direct, environment, { networkConfiguration: undefined }))).toEqual({
      name: 'InvalidParameterException',
      message: "Network Configuration must be provided when networkMode 'awsvpc' is specified.",
    });
    expect(await error(runTask(direct, environment, { networkConfiguration: { awsvpcConfiguration: { subnets: [] } } }))).toEqual({
      name: 'InvalidParameterException',
      message: 'subnets can not be empty.',
    });
    const long = [{ name: 'SLIPWAY_BUNDLE_URL', value: 'x'.repeat(8200) }];
    expect(await error(runTask(direct, long))).toEqual({
      name: 'InvalidParameterException',
      message: 'Container Overrides length must be at most 8192',
    });
    expect(await error(runTask(direct, environment, { overrides: { containerOverrides: [{ name: 'other' }] } }))).toEqual({
      name: 'InvalidParameterException',
      message: 'Override for container named other is not a container in the TaskDefinition.',
    });
    expect(await error(runTask(direct, environment, { taskDefinition: 'nosuch:1' }))).toEqual({
      name: 'ClientException',
      message: 'TaskDefinition not found.',
    });
    expect(await error(direct.send(new StopTaskCommand({ cluster: worker.cluster, task: '0'.repeat(32) })))).toEqual({
      name: 'InvalidParameterException',
      message: 'The referenced task was not found.',
    });
    const missing = await direct.send(new DescribeTasksCommand({ cluster: worker.cluster, tasks: ['0'.repeat(32)] }));
    expect(missing).toMatchObject({ tasks: [], failures: [{ arn: '0'.repeat(32), reason: 'MISSING' }] });
    // Nothing was started by a refused call.
    expect(platform.synthesized!.ecs.tasks().filter((t) => t.taskDefinitionArn === worker.taskDefinition)).toHaveLength(3);
  });

  it("the worker's role may run the task only in its cluster: another is refused by IAM before ECS sees it", async () => {
    const denied = await runTask(ecs, taskEnvironment('elsewhere', ''), { cluster: 'other' }).catch((e: Error) => e);
    expect(denied).toMatchObject({ name: 'AccessDeniedException' });
    expect((denied as Error).message).toContain('is not authorized to perform: ecs:RunTask');
  });
});

describe('containers.ts: a container of a task definition as a local process', () => {
  let imageDir: string;
  beforeAll(() => {
    imageDir = mkdtempSync(join(tmpdir(), 'slipway-image-test-'));
  });
  afterAll(() => rmSync(imageDir, { recursive: true, force: true }));

  const start = (
    dockerfile: string,
    files: Record<string, string>,
    extra: { environment?: Record<string, string>; readonly?: boolean } = {},
  ) => {
    writeFileSync(join(imageDir, 'Dockerfile'), dockerfile);
    for (const [name, text] of Object.entries(files)) writeFileSync(join(imageDir, name), text);
    let output = '';
    const running = startContainer({
      definition: {
        Name: 'app',
        User: '1000:1000',
        ReadonlyRootFilesystem: extra.readonly ?? true,
        MountPoints: [{ ContainerPath: '/tmp', SourceVolume: 'scratch' }],
      },
      imageDir,
      environment: extra.environment ?? {},
      credentials: {
        accessKeyId: 'LOCALTASKSlipwayFunctionsInvocationTask478BFD96',
        secretAccessKey: 'local',
        endpoint: platform.synthesized!.awsEndpoint,
        region: 'us-east-1',
      },
      memoryMiB: 512,
      caps: probeSandbox(),
      id: `i${process.pid}-test-${Math.random().toString(36).slice(2)}`,
      onOutput: (_stream, text) => (output += text),
    });
    return { running, output: () => output };
  };

  it("runs the image's entry as its user in its working folder, with exactly the container's environment, a read-only root, its /tmp", async () => {
    const main = `
      import { writeFileSync } from 'node:fs';
      let rootWritable = true;
      try { writeFileSync('/app/x', '1'); } catch { rootWritable = false; }
      writeFileSync('/tmp/scratch', '1');
      const seen = { env: process.env, cwd: process.cwd(), uid: process.getuid(), node: process.versions.node, rootWritable };
      console.log(JSON.stringify(seen));`;
    const { running, output } = start(
      'FROM node:22-slim\nWORKDIR /app\nCOPY main.mjs /app/\nUSER node\nENV NODE_ENV=production\nENTRYPOINT ["node", "/app/main.mjs"]\n',
      { 'main.mjs': main },
      {
        environment: { ONE: '1' },
      },
    );
    expect(await (await running).exited).toEqual({ exitCode: 0, outOfMemory: false });
    const seen = JSON.parse(output());
    expect(seen).toMatchObject({ cwd: '/app', uid: 1000, rootWritable: false });
    expect(seen.node.split('.')[0]).toBe('22');
    expect(Object.keys(seen.env).sort()).toEqual(
      [
        'AWS_ACCESS_KEY_ID',
        'AWS_DEFAULT_REGION',
        'AWS_ENDPOINT_URL',
        'AWS_EXECUTION_ENV',
        'AWS_REGION',
        'AWS_SECRET_ACCESS_KEY',
        'HOME',
        'NODE_ENV',
        'ONE',
        'PATH',
      ].sort(),
    );
    expect(seen.env).toMatchObject({ ONE: '1', NODE_ENV: 'production', AWS_EXECUTION_ENV: 'AWS_ECS_FARGATE' });
  });

  it('the task role grants nothing: an AWS call with its keys goes through the IAM proxy and is refused', async () => {
    const main = `
      const reply = await fetch(process.env.AWS_ENDPOINT_URL + '/some-bucket/some-key', { headers: {
        authorization: 'AWS4-HMAC-SHA256 Credential=' + process.env.AWS_ACCESS_KEY_ID +
          '/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0',
      } });
      console.log(reply.status, await reply.text());`;
    const { running, output } = start('FROM node:22\nCOPY main.mjs /app/\nENTRYPOINT ["node", "/app/main.mjs"]\n', { 'main.mjs': main });
    expect((await (await running).exited).exitCode).toBe(0);
    expect(output()).toMatch(
      new RegExp(
        '^403 .*<Code>AccessDenied</Code>.*assumed-role/[^/]+InvocationTaskRole[^/]*/SlipwayFunctionsInvocationTask478BFD96 ' +
          'is not authorized to perform: s3:GetObject',
        's',
      ),
    );
  });

  it('stop: SIGTERM to PID 1, which ignores it without a handler (no init, as in Docker); SIGKILL after the grace: 137', async () => {
    const { running } = start('FROM node:22\nCOPY main.mjs /app/\nENTRYPOINT ["node", "/app/main.mjs"]\n', {
      'main.mjs': 'setInterval(() => {}, 1000);',
    });
    const container = await running;
    await sleep(500);
    const began = Date.now();
    container.stop(1000);
    expect((await container.exited).exitCode).toBe(137);
    expect(Date.now() - began).toBeGreaterThanOrEqual(900);
  });

  it('refuses, with the reason, what a local process cannot be: a RUN step, another base, another Node major, a shell entry', async () => {
    const refusal = async (dockerfile: string) => (await start(dockerfile, {}).running.catch((e: Error) => e)) as Error;
    for (const [dockerfile, reason] of [
      ['FROM node:22\nRUN npm install\n', 'RUN: the local platform builds no image, so a Dockerfile may only copy files and set the entry'],
      ['FROM python:3.12\n', "FROM python:3.12: only a node image's files can be run locally"],
      ['FROM node:20\nENTRYPOINT ["node"]\n', 'the image runs Node 20; this machine has 22.'],
      [
        'FROM node:22\nENTRYPOINT node /app/main.mjs\n',
        'ENTRYPOINT node /app/main.mjs: only the exec form (a JSON array) runs here, without a shell',
      ],
      ['FROM node:22\nENTRYPOINT ["sh", "-c", "true"]\n', 'the entry ["sh","-c","true"] is not node, the one program the image has here'],
    ]) {
      const error = await refusal(dockerfile!);
      expect(error).toBeInstanceOf(ContainerStartError);
      expect(error.message.startsWith(reason!)).toBe(true);
    }
  });
});
