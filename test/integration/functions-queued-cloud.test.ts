import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import {
  CreateClusterCommand,
  DescribeTasksCommand,
  ECSClient,
  ListTasksCommand,
  RegisterTaskDefinitionCommand,
  type Task,
} from '@aws-sdk/client-ecs';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { repoRoot } from '../../infra/bundling.ts';
import { createCloudFunctionHost } from '../../lib/functions/hosts/cloud/cloud-host.ts';
import {
  queuedTaskKeys,
  RUNNER_CONTAINER_NAME,
  stoppedTaskOutcome,
  TASK_EXIT,
  TASK_VARIABLES,
} from '../../lib/functions/hosts/cloud/queued-task.ts';
import { cloudHostVariables } from '../../lib/functions/hosts/cloud/variables.ts';
import type { QueuedRequest } from '../../lib/functions/host.ts';
import { finishOf } from '../../lib/functions/queued.ts';
import type { DeployedFunction } from '../../lib/functions/model.ts';
import { bucketDefinitions, tableDefinition } from '../../lib/resources.ts';
import { fillWarmPool, keepWarmPool, takeWarmTask } from '../../lib/functions/hosts/cloud/warm-tasks.ts';
import { listWarmSlots } from '../../lib/functions/warm-task-records.ts';
import { StopTaskCommand } from '@aws-sdk/client-ecs';

/**
 * The cloud side of queued invocations (lib/functions/hosts/cloud/cloud-host.ts
 * `runQueued`, lib/functions/runner/task.mjs) against the shared moto_server:
 * moto records RunTask, DescribeTasks and StopTask but runs no container, so
 * the task's entry is run here as a child process with the very environment
 * the worker gave the recorded task (presigned URLs of the moto bucket, plain
 * http on loopback). No SDK is mocked. Real Fargate is not exercised.
 */

const endpoint = inject('awsEndpoint');
const suffix = randomBytes(4).toString('hex');
const bucket = `queued-cloud-${suffix}`;
const clusterName = `invocations-${suffix}`;
const taskEntry = join(repoRoot, 'lib/functions/runner/task.mjs');
const client = { region: 'us-east-1', endpoint, forcePathStyle: true };
const s3 = new S3Client(client);
const ecs = new ECSClient(client);
let taskDefinitionArn = '';

const HANDLER = `export default async function (request) {
  const body = await request.text();
  console.log('got', request.method, new URL(request.url).search, body);
  console.error('to stderr');
  if (body === 'crash') process.exit(1);
  if (body === 'throw') throw new Error('boom');
  const headers = new Headers({ 'content-type': 'text/plain', 'x-env': String(Object.keys(process.env).filter((k) => k.startsWith('SLIPWAY_')).length) });
  headers.append('set-cookie', 'a=1; Path=/');
  headers.append('set-cookie', 'b=2; Path=/');
  return new Response('echo:' + body, { status: 201, headers });
}
`;

function fnFor(bundleKey: string): DeployedFunction {
  return {
    function_id: `fn_${suffix}`,
    team_id: `team_${suffix}`,
    project_id: `prj_${suffix}`,
    deployment_id: `dep_${suffix}`,
    name: 'echo',
    subdomain: 'demo',
    url: 'https://echo-demo.fn.slipway.test/',
    bundle_key: bundleKey,
    bundle_sha256: 'x',
  } as unknown as DeployedFunction;
}

const request = (body: string, invocation = { id: randomUUID(), team_id: `team_${suffix}`, requestStored: true }): QueuedRequest => ({
  method: 'POST',
  query: 'q=1',
  headers: [['content-type', 'text/plain']],
  body: Buffer.from(body),
  invocation,
});

async function putRequest(req: QueuedRequest) {
  const keys = queuedTaskKeys(req.invocation!);
  const stored = { method: req.method, query: req.query, headers: req.headers, body: req.body.toString('base64') };
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: keys.request, Body: JSON.stringify(stored) }));
  return keys;
}

async function readObject<T>(key: string): Promise<T | null> {
  try {
    const reply = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return JSON.parse(await reply.Body!.transformToString()) as T;
  } catch {
    return null;
  }
}

/** Runs the task entry as the container would, with `env` as its environment; resolves with its exit code. */
function runEntry(env: Record<string, string>): Promise<number | null> {
  const child = spawn(process.execPath, [taskEntry], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  return new Promise((resolve) =>
    child.once('close', (code) => {
      if (code !== 0 && process.env.DEBUG_TASK) console.log(err);
      resolve(code);
    }),
  );
}

async function presigned(keys: ReturnType<typeof queuedTaskKeys>, bundleKey: string): Promise<Record<string, string>> {
  const get = (key: string) => getSignedUrl(s3, new GetObjectCommand({ Bucket: bucket, Key: key }), { expiresIn: 600 });
  const put = (key: string) => getSignedUrl(s3, new PutObjectCommand({ Bucket: bucket, Key: key }), { expiresIn: 600 });
  return {
    [TASK_VARIABLES.bundleUrl]: await get(bundleKey),
    [TASK_VARIABLES.requestUrl]: await get(keys.request),
    [TASK_VARIABLES.resultUrl]: await put(keys.result),
    [TASK_VARIABLES.consoleUrl]: await put(keys.console),
    [TASK_VARIABLES.functionUrl]: 'https://echo-demo.fn.slipway.test/',
  };
}

/**
 * One EC2 Query call to moto (no EC2 client is a dependency): moto routes by
 * the credential scope of the Authorization header and checks no signature.
 */
async function ec2(params: Record<string, string>): Promise<string> {
  const reply = await fetch(endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: 'AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/ec2/aws4_request, SignedHeaders=host, Signature=0',
    },
    body: new URLSearchParams({ Version: '2016-11-15', ...params }).toString(),
  });
  const text = await reply.text();
  if (!reply.ok) throw new Error(`EC2 ${params.Action} failed: ${text}`);
  return text;
}

const tagValue = (xml: string, tag: string) => new RegExp(`<${tag}>([^<]+)</${tag}>`).exec(xml)?.[1] ?? '';

async function tasksStartedBy(id: string): Promise<Task[]> {
  const arns = new Set<string>();
  for (const desiredStatus of ['RUNNING', 'STOPPED'] as const) {
    for (const arn of (await ecs.send(new ListTasksCommand({ cluster: clusterName, startedBy: id, desiredStatus }))).taskArns ?? [])
      arns.add(arn);
  }
  if (arns.size === 0) return [];
  return (await ecs.send(new DescribeTasksCommand({ cluster: clusterName, tasks: [...arns] }))).tasks ?? [];
}

/** moto advances a task one lifecycle step per DescribeTasks (RUNNING to STOPPED in four); keep it RUNNING until stopped. */
async function motoTaskTransition(action: 'set-transition' | 'unset-transition') {
  const body =
    action === 'set-transition'
      ? { model_name: 'ecs::task', transition: { progression: 'manual', times: 1_000_000 } }
      : { model_name: 'ecs::task' };
  const reply = await fetch(`${endpoint}/moto-api/state-manager/${action}`, { method: 'POST', body: JSON.stringify(body) });
  if (!reply.ok) throw new Error(`moto ${action}: ${reply.status}`);
}

afterAll(() => motoTaskTransition('unset-transition'));

beforeAll(async () => {
  await motoTaskTransition('set-transition');
  process.env.AWS_ENDPOINT_URL = endpoint;
  process.env[bucketDefinitions.bundles.envVar] = bucket;
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'functions/echo.mjs', Body: HANDLER }));
  const cluster = await ecs.send(new CreateClusterCommand({ clusterName }));
  const definition = await ecs.send(
    new RegisterTaskDefinitionCommand({
      family: `invocation-${suffix}`,
      requiresCompatibilities: ['FARGATE'],
      networkMode: 'awsvpc',
      cpu: '256',
      memory: '512',
      // Container-level cpu and memory: moto sums them to place a task (infra/ sets them on the task only).
      containerDefinitions: [
        { name: RUNNER_CONTAINER_NAME, image: 'runner:test', cpu: 256, memory: 512, essential: true, readonlyRootFilesystem: true },
      ],
    }),
  );
  taskDefinitionArn = definition.taskDefinition!.taskDefinitionArn!;
  process.env[cloudHostVariables.taskCluster] = cluster.cluster!.clusterArn!;
  process.env[cloudHostVariables.taskDefinitionArn] = taskDefinitionArn;
  // moto checks the subnets and group RunTask names, so they exist.
  const vpcId = tagValue(await ec2({ Action: 'CreateVpc', CidrBlock: '10.90.0.0/16' }), 'vpcId');
  const subnets = [];
  for (const cidr of ['10.90.0.0/20', '10.90.16.0/20'])
    subnets.push(tagValue(await ec2({ Action: 'CreateSubnet', VpcId: vpcId, CidrBlock: cidr }), 'subnetId'));
  const group = tagValue(
    await ec2({ Action: 'CreateSecurityGroup', VpcId: vpcId, GroupName: `compute-${suffix}`, GroupDescription: 'test' }),
    'groupId',
  );
  process.env[cloudHostVariables.subnetIds] = subnets.join(',');
  process.env[cloudHostVariables.securityGroupId] = group;
  process.env.FUNCTIONS_TASK_POLL_MS = '100';
});

describe('the task entry (lib/functions/runner/task.mjs) against presigned moto URLs', () => {
  it('runs the handler once and uploads the result (several Set-Cookie kept as pairs) and the console', async () => {
    const req = request('hello');
    const keys = await putRequest(req);
    expect(await runEntry(await presigned(keys, 'functions/echo.mjs'))).toBe(TASK_EXIT.result);
    const result = await readObject<{ status: number; headers: [string, string][]; body: string; outcome: string }>(keys.result);
    expect(result).toMatchObject({ status: 201, outcome: 'response' });
    expect(Buffer.from(result!.body, 'base64').toString()).toBe('echo:hello');
    expect(result!.headers).toContainEqual(['set-cookie', 'a=1; Path=/']);
    expect(result!.headers).toContainEqual(['set-cookie', 'b=2; Path=/']);
    // The presigned URLs never reach user code.
    expect(result!.headers).toContainEqual(['x-env', '0']);
    const console = await readObject<{ stream: string; line: string }[]>(keys.console);
    expect(console!.map(({ stream, line }) => [stream, line])).toEqual([
      ['stdout', 'got POST ?q=1 hello'],
      ['stderr', 'to stderr'],
    ]);
    // The queued door joins the cookies as it does for the local host.
    const finish = finishOf({
      outcome: 'response',
      reply: { status: 201, headers: result!.headers, body: Buffer.from('') },
      console: [],
      runtimeMs: 1,
    });
    expect(finish.result.headers['set-cookie']).toBe('a=1; Path=/, b=2; Path=/');
  });

  it('reports a handler that throws as handler_error with a bare 500', async () => {
    const req = request('throw');
    const keys = await putRequest(req);
    expect(await runEntry(await presigned(keys, 'functions/echo.mjs'))).toBe(TASK_EXIT.result);
    expect(await readObject(keys.result)).toMatchObject({ status: 500, outcome: 'handler_error' });
  });

  it('exits 3 without a result when the handler ends its process, the console still uploaded', async () => {
    const req = request('crash');
    const keys = await putRequest(req);
    expect(await runEntry(await presigned(keys, 'functions/echo.mjs'))).toBe(TASK_EXIT.crashed);
    expect(await readObject(keys.result)).toBeNull();
    expect((await readObject<{ line: string }[]>(keys.console))!.map((l) => l.line)).toContain('got POST ?q=1 crash');
  });

  it('uploads a start_failed result when the bundle cannot be fetched', async () => {
    const req = request('x');
    const keys = await putRequest(req);
    expect(await runEntry(await presigned(keys, 'functions/missing.mjs'))).toBe(TASK_EXIT.result);
    expect(await readObject(keys.result)).toMatchObject({ outcome: 'start_failed' });
  });
});

describe('runQueued of the cloud host against moto ECS', () => {
  it('starts the runner task with the URLs in its overrides and returns what the task uploaded', async () => {
    const host = createCloudFunctionHost();
    const req = request('from the worker');
    const keys = await putRequest(req);
    const running = host.runQueued(fnFor('functions/echo.mjs'), req, 20_000, new AbortController().signal);
    // moto records the task; play the container with the environment it was given.
    let task: Task | undefined;
    for (let i = 0; i < 50 && !task; i++) {
      task = (await tasksStartedBy(req.invocation!.id))[0];
      if (!task) await new Promise((r) => setTimeout(r, 100));
    }
    expect(task).toBeDefined();
    expect(task!.taskDefinitionArn).toBe(taskDefinitionArn);
    expect(task!.launchType).toBe('FARGATE');
    expect(task!.attachments?.[0]?.details).toContainEqual({
      name: 'subnetId',
      value: process.env[cloudHostVariables.subnetIds]!.split(',')[0],
    });
    const override = task!.overrides!.containerOverrides!.find((o) => o.name === RUNNER_CONTAINER_NAME)!;
    const env = Object.fromEntries(override.environment!.map(({ name, value }) => [name!, value!]));
    expect(Object.keys(env).sort()).toEqual(Object.values(TASK_VARIABLES).sort());
    expect(env[TASK_VARIABLES.resultUrl]).toContain(`/${bucket}/${keys.result}?`);
    expect(env[TASK_VARIABLES.bundleUrl]).toContain(`/${bucket}/functions/echo.mjs?`);
    expect(env[TASK_VARIABLES.functionUrl]).toBe('https://echo-demo.fn.slipway.test/');
    expect(await runEntry(env)).toBe(TASK_EXIT.result);

    const result = await running;
    expect(result.outcome).toBe('response');
    expect(result.reply!.status).toBe(201);
    expect(result.reply!.body.toString()).toBe('echo:from the worker');
    expect(result.reply!.headers.filter(([name]) => name === 'set-cookie')).toHaveLength(2);
    expect(result.console.map((line) => line.line)).toEqual(['got POST ?q=1 from the worker', 'to stderr']);
  });

  it('stores a request kept in its invocation record (a small one) where its task reads it', async () => {
    const host = createCloudFunctionHost();
    const req = request('kept in the record', { id: randomUUID(), team_id: `team_${suffix}`, requestStored: false });
    const keys = queuedTaskKeys(req.invocation!);
    expect(await readObject(keys.request)).toBeNull();
    const running = host.runQueued(fnFor('functions/echo.mjs'), req, 20_000, new AbortController().signal);
    let task: Task | undefined;
    for (let i = 0; i < 50 && !task; i++) {
      task = (await tasksStartedBy(req.invocation!.id))[0];
      if (!task) await new Promise((r) => setTimeout(r, 100));
    }
    expect(await readObject(keys.request)).toEqual({
      method: 'POST',
      query: 'q=1',
      headers: [['content-type', 'text/plain']],
      body: Buffer.from('kept in the record').toString('base64'),
    });
    const override = task!.overrides!.containerOverrides!.find((o) => o.name === RUNNER_CONTAINER_NAME)!;
    expect(await runEntry(Object.fromEntries(override.environment!.map(({ name, value }) => [name!, value!])))).toBe(TASK_EXIT.result);
    expect((await running).reply!.body.toString()).toBe('echo:kept in the record');
  });

  it('stops the task at the budget and ends timed_out', async () => {
    const host = createCloudFunctionHost();
    const req = request('never answered');
    await putRequest(req);
    const started = Date.now();
    const result = await host.runQueued(fnFor('functions/echo.mjs'), req, 1500, new AbortController().signal);
    expect(result).toMatchObject({ outcome: 'timed_out', reply: null });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1500);
    const [task] = await tasksStartedBy(req.invocation!.id);
    expect(task!.lastStatus).toBe('STOPPED');
    expect(task!.stoppedReason).toMatch(/time budget/);
    expect(finishOf(result)).toMatchObject({ status: 'timed_out', result: { status: 504 } });
  });

  it('stops the task and ends aborted when the platform stops', async () => {
    const host = createCloudFunctionHost();
    const req = request('aborted');
    await putRequest(req);
    const stopping = new AbortController();
    setTimeout(() => stopping.abort(), 500);
    const result = await host.runQueued(fnFor('functions/echo.mjs'), req, 20_000, stopping.signal);
    expect(result.outcome).toBe('aborted');
    const [task] = await tasksStartedBy(req.invocation!.id);
    expect(task!.lastStatus).toBe('STOPPED');
  });

  it('ends as could-not-run when RunTask fails', async () => {
    const host = createCloudFunctionHost();
    const saved = process.env[cloudHostVariables.taskDefinitionArn];
    process.env[cloudHostVariables.taskDefinitionArn] = `arn:aws:ecs:us-east-1:123456789012:task-definition/missing-${suffix}:1`;
    try {
      const result = await host.runQueued(fnFor('functions/echo.mjs'), request('x'), 5000, new AbortController().signal);
      expect(result).toMatchObject({ outcome: 'start_failed', reply: null });
    } finally {
      process.env[cloudHostVariables.taskDefinitionArn] = saved;
    }
  });
});

/** The blank tasks moto recorded for a warm slot, and the environment each was given. */
async function warmTasks(): Promise<{ task: Task; env: Record<string, string> }[]> {
  const found: { task: Task; env: Record<string, string> }[] = [];
  for (const slot of [0, 1, 2])
    for (const task of await tasksStartedBy(`warm-slot-${slot}`)) {
      const override = task.overrides!.containerOverrides!.find((o) => o.name === RUNNER_CONTAINER_NAME)!;
      found.push({ task, env: Object.fromEntries(override.environment!.map(({ name, value }) => [name!, value!])) });
    }
  return found;
}

describe('the warm pool (lib/functions/hosts/cloud/warm-tasks.ts) against moto', () => {
  beforeAll(async () => {
    // The pool's slots live in the table: a table of this file's own on the same endpoint.
    const table = `warm-${suffix}`;
    await new DynamoDBClient(client).send(
      new CreateTableCommand({
        TableName: table,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
      }),
    );
    process.env[tableDefinition.envVar] = table;
  });

  it('racing fillers start one blank task per slot, holding only their assignment URL', async () => {
    await Promise.all(Array.from({ length: 6 }, () => fillWarmPool(2)));
    const blanks = await warmTasks();
    expect(blanks.map(({ task }) => task.startedBy).sort()).toEqual(['warm-slot-0', 'warm-slot-1']);
    for (const { env } of blanks) {
      expect(Object.keys(env).sort()).toEqual(['SLIPWAY_ASSIGNMENT_POLL_MS', 'SLIPWAY_ASSIGNMENT_URL', 'SLIPWAY_WARM_UNTIL']);
      expect(env.SLIPWAY_ASSIGNMENT_URL).toMatch(new RegExp(`/${bucket}/invocations/warm/[0-9a-f-]{36}/assignment\\.json\\?`));
    }
    const slots = await listWarmSlots();
    expect(slots.map((slot) => slot.task_arn).sort()).toEqual(blanks.map(({ task }) => task.taskArn).sort());
  });

  it('racing takes hand each blank task to one worker only; a taken slot is filled again', async () => {
    const before = (await listWarmSlots()).map((slot) => slot.task_arn).sort();
    const taken = await Promise.all(Array.from({ length: 5 }, () => takeWarmTask()));
    const arns = taken.flatMap((t) => (t ? [t.taskArn] : []));
    expect(arns.sort()).toEqual(before);
    expect(taken.filter((t) => t === null)).toHaveLength(3);
    expect(await listWarmSlots()).toEqual([]);
    await fillWarmPool(2);
    const after = await listWarmSlots();
    expect(after).toHaveLength(2);
    for (const slot of after) expect(before).not.toContain(slot.task_arn);
  });

  it('of two waiting blank tasks, one runs the invocation a worker assigns and exits; the other ends its wait with exit 4; the slot is refilled', async () => {
    process.env.FUNCTIONS_WARM_TASKS = '2';
    try {
      const host = createCloudFunctionHost();
      const inSlots = new Set((await listWarmSlots()).map((slot) => slot.task_arn));
      const blanks = (await warmTasks()).filter(({ task }) => inSlots.has(task.taskArn));
      expect(blanks).toHaveLength(2);
      // Both containers played, their waits shortened to a few seconds (the records keep the real end).
      const until = String(Date.now() + 5000);
      const exits = blanks.map(({ env }) => runEntry({ ...env, SLIPWAY_WARM_UNTIL: until, SLIPWAY_ASSIGNMENT_POLL_MS: '50' }));
      const req = request('through a warm task');
      await putRequest(req);
      const result = await host.runQueued(fnFor('functions/echo.mjs'), req, 20_000, new AbortController().signal);
      expect(result.outcome).toBe('response');
      expect(result.reply!.body.toString()).toBe('echo:through a warm task');
      expect((await Promise.all(exits)).sort()).toEqual([TASK_EXIT.result, TASK_EXIT.unassigned].sort());
      // No task of its own was started: the invocation ran in a blank one.
      expect(await tasksStartedBy(req.invocation!.id)).toEqual([]);
      // The slot it emptied holds a new task; the other still names its own.
      const slots = await listWarmSlots();
      expect(slots).toHaveLength(2);
      expect(slots.filter((slot) => inSlots.has(slot.task_arn))).toHaveLength(1);
    } finally {
      delete process.env.FUNCTIONS_WARM_TASKS;
    }
  });

  it('the keeper empties the slots of tasks that stopped (a Spot interruption) and starts new ones', async () => {
    const before = await listWarmSlots();
    for (const slot of before) await ecs.send(new StopTaskCommand({ cluster: clusterName, task: slot.task_arn }));
    expect(await keepWarmPool(2)).toEqual({ cleared: 2, started: 2 });
    const after = await listWarmSlots();
    expect(after).toHaveLength(2);
    for (const slot of after) expect(before.map((b) => b.task_arn)).not.toContain(slot.task_arn);
    // A full pool of live tasks is left as it is.
    expect(await keepWarmPool(2)).toEqual({ cleared: 0, started: 0 });
  });
});

describe('a task that stopped without a result', () => {
  it('is out of memory on exit 137 or an OutOfMemory reason, crashed on exit 3, else could not be run', () => {
    const container = (fields: object) => ({ containers: [{ name: RUNNER_CONTAINER_NAME, ...fields }] });
    expect(stoppedTaskOutcome(container({ exitCode: 137 }))).toBe('out_of_memory');
    expect(stoppedTaskOutcome({ ...container({ reason: 'OutOfMemoryError: Container killed due to memory usage' }) })).toBe(
      'out_of_memory',
    );
    expect(stoppedTaskOutcome({ stoppedReason: 'OutOfMemoryError: Container killed due to memory usage', containers: [] })).toBe(
      'out_of_memory',
    );
    expect(stoppedTaskOutcome(container({ exitCode: 3 }))).toBe('crashed');
    expect(stoppedTaskOutcome({ stopCode: 'TaskFailedToStart', stoppedReason: 'CannotPullContainerError', ...container({}) })).toBe(
      'start_failed',
    );
    expect(stoppedTaskOutcome(container({ exitCode: 1 }))).toBe('start_failed');
  });
});
