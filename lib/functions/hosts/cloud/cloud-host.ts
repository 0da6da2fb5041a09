import { createHash, randomUUID } from 'node:crypto';
import { PassThrough, type Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import {
  CreateFunctionCommand,
  GetFunctionCommand,
  InvokeWithResponseStreamCommand,
  waitUntilFunctionActiveV2,
  type InvokeWithResponseStreamResponseEvent,
} from '@aws-sdk/client-lambda';
import { DescribeTasksCommand, ECSClient, RunTaskCommand, StopTaskCommand, type Task } from '@aws-sdk/client-ecs';
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { lazyClient } from '../../../aws/clients.ts';
import { lambda } from '../../../aws/lambda.ts';
import { s3 } from '../../../aws/s3.ts';
import { config } from '../../../config.ts';
import {
  FunctionHostError,
  type ConsoleLine,
  type DoorForward,
  type DoorOutcome,
  type DoorReply,
  type FunctionHost,
  type QueuedRequest,
  type QueuedResult,
} from '../../host.ts';
import { FUNCTION_MEMORY_MB, type DeployedFunction } from '../../model.ts';
import { OUTCOME_HEADER, RUNNER_BOOT_MS_HEADER, RUNNER_COLD_START_HEADER, RUNNER_INSTANCE_HEADER } from '../../runner/protocol.mjs';

/**
 * The cloud adapter of FunctionHost (docs/functions.md): one Lambda function
 * per built bundle, made from the runner layer and the bundle the first time
 * a request needs it, and reached with InvokeWithResponseStream.
 *
 * Each such Lambda's package is the bundle (`function.mjs`) and the entry
 * below, which drives the runner's exported core (lib/functions/runner/runner.mjs,
 * in the runner layer at /opt): it receives a `CloudRunnerEvent` and streams
 * the prelude JSON, eight NUL bytes, then the body — the layout of the Lambda
 * runtime's `HttpResponseStream` — with its report in `x-slipway-runner-*`
 * headers of the prelude.
 */

/** The variables the stack gives the router (infra/functions-runtime.ts) and this host reads. */
export const cloudHostVariables = {
  /** Every user-function Lambda's name starts with it; the router may create and invoke only those. */
  namePrefix: 'FUNCTIONS_LAMBDA_PREFIX',
  /** The execution role of every user-function Lambda (no platform permissions, a permissions boundary). */
  roleArn: 'FUNCTIONS_ROLE_ARN',
  /** The runner layer version. */
  runnerLayerArn: 'FUNCTIONS_RUNNER_LAYER_ARN',
  /** Comma-separated private subnets whose network ACL allows HTTPS to public addresses only. */
  subnetIds: 'FUNCTIONS_SUBNET_IDS',
  /** The security group that allows TCP 443 egress and nothing else. */
  securityGroupId: 'FUNCTIONS_SECURITY_GROUP_ID',
  /** The ECS cluster queued invocations run in (the invocations worker only). */
  taskCluster: 'FUNCTIONS_TASK_CLUSTER',
  /** The runner's Fargate task definition (the invocations worker only). */
  taskDefinitionArn: 'FUNCTIONS_TASK_DEFINITION_ARN',
} as const;

/**
 * What the door hands the runner's Lambda mode. The body is base64 in the
 * JSON payload, so the 6 MB invoke limit holds about 4.4 MiB of body
 * (docs/functions.md, Limits).
 */
export interface CloudRunnerEvent {
  method: string;
  /** The function's public URL; with `query` it is the handler's `request.url`. */
  publicUrl: string;
  /** The caller's query string without `?`. */
  query: string;
  headers: [string, string][];
  bodyBase64: string | null;
}

/** How long a user-function Lambda may run: the handler keeps running after the door's 60 s budget until it finishes or this ends. */
export const USER_FUNCTION_TIMEOUT_SECONDS = 300;
/** The runner's module in the layer (a layer's files land under /opt). */
export const RUNNER_LAYER_MODULE = '/opt/runner.mjs';

const PRELUDE_DELIMITER = Buffer.alloc(8);

/**
 * The entry of every user-function Lambda. Init loads the bundle; each
 * invocation builds the Request, calls the handler through the runner's core,
 * streams the reply, then stays until the `waitUntil` promises settle (the
 * caller already has the whole reply; a returned invocation would freeze them).
 */
export const LAMBDA_ENTRY_SOURCE = `import { Buffer } from 'node:buffer';
import { buildRequest, createContext, invokeHandler, loadHandler, replyHead } from '${RUNNER_LAYER_MODULE}';
const booting = Date.now();
const loading = loadHandler(new URL('./function.mjs', import.meta.url).pathname);
loading.catch(() => {});
const instance = process.env.AWS_LAMBDA_LOG_STREAM_NAME || process.env.AWS_LAMBDA_FUNCTION_NAME || '';
let cold = true;
let bootMs = 0;
export const handler = awslambda.streamifyResponse(async (event, responseStream) => {
  const fn = await loading;
  const wasCold = cold;
  if (cold) bootMs = Date.now() - booting;
  cold = false;
  const { context, pending } = createContext();
  const request = buildRequest({
    method: event.method,
    publicUrl: event.publicUrl,
    query: event.query,
    headers: event.headers,
    body: event.bodyBase64 ? Buffer.from(event.bodyBase64, 'base64') : null,
  });
  const result = await invokeHandler(fn, request, context);
  const { status, headers } = replyHead(result);
  const flat = {};
  const cookies = [];
  for (const [name, value] of headers) {
    if (name === 'set-cookie') cookies.push(value);
    else flat[name] = flat[name] === undefined ? value : flat[name] + ', ' + value;
  }
  flat['${RUNNER_COLD_START_HEADER}'] = String(wasCold);
  if (wasCold) flat['${RUNNER_BOOT_MS_HEADER}'] = String(bootMs);
  flat['${RUNNER_INSTANCE_HEADER}'] = instance;
  const out = awslambda.HttpResponseStream.from(responseStream, { statusCode: status, headers: flat, cookies });
  const body = result.outcome === 'response' && event.method !== 'HEAD' ? result.response.body : null;
  if (body) {
    for await (const chunk of body) {
      if (!out.write(chunk)) await new Promise((resolve) => out.once('drain', resolve));
    }
  }
  out.end();
  await Promise.allSettled([...pending]);
});
`;

export interface RunnerPrelude {
  statusCode: number;
  headers: Record<string, string>;
  cookies: string[];
}

/** The Lambda name of one built bundle: content-addressed, so a rollback reuses it and a rebuild makes a new one. */
export function functionLambdaName(prefix: string, fn: Pick<DeployedFunction, 'function_id' | 'bundle_sha256'>): string {
  const digest = createHash('sha256').update(`${fn.function_id}:${fn.bundle_sha256}`).digest('hex');
  return `${prefix}${digest}`.slice(0, 64);
}

/**
 * The `slipway:*` tags of a user-function Lambda: the sweep (lib/sweep.ts) finds the records that still name it
 * through the project (the team, on a Lambda made before the project was tagged).
 */
export function functionLambdaTags(
  fn: Pick<DeployedFunction, 'function_id' | 'team_id' | 'project_id' | 'bundle_sha256'>,
): Record<string, string> {
  return {
    'slipway:function-id': fn.function_id,
    'slipway:team-id': fn.team_id,
    'slipway:project-id': fn.project_id,
    'slipway:bundle-sha256': fn.bundle_sha256,
  };
}

/**
 * The deployment package of a user-function Lambda: the bundle and a one-line
 * entry that hands the invocation to the runner in the layer. A stored (not
 * deflated) zip: the bundle is at most 900 KB and Lambda takes up to 50 MB.
 */
export function functionPackage(bundle: Buffer): Buffer {
  return storedZip([
    { name: 'index.mjs', data: Buffer.from(LAMBDA_ENTRY_SOURCE) },
    { name: 'function.mjs', data: bundle },
  ]);
}

/** A zip archive of stored entries (no compression), readable by Lambda and `unzip`. */
export function storedZip(entries: { name: string; data: Buffer }[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const { name, data } of entries) {
    const nameBytes = Buffer.from(name, 'utf8');
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(0, 8); // stored
    local.writeUInt32LE(0, 10); // time, date: 1980-00-00, so a package's hash depends on its content only
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    local.writeUInt16LE(0, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4); // made by Unix, so the mode below is read
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(0, 10);
    central.writeUInt32LE(0, 12);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(0, 30); // extra, comment lengths
    central.writeUInt32LE(0, 34); // disk number, internal attributes
    central.writeUInt32LE((0o100644 << 16) >>> 0, 38); // -rw-r--r--
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, data);
    centrals.push(central, nameBytes);
    offset += local.length + nameBytes.length + data.length;
  }
  const centralSize = centrals.reduce((sum, part) => sum + part.length, 0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(centralSize, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, ...centrals, end]);
}

/**
 * Splits a streamed reply into its prelude and its body: resolves with the
 * prelude once the eight NUL bytes after it have arrived; the body stream then
 * carries the rest. A stream that ends or fails before the prelude rejects.
 */
export function decodeRunnerStream(chunks: AsyncIterable<Uint8Array>): Promise<{ prelude: RunnerPrelude; body: Readable }> {
  return new Promise((resolve, reject) => {
    const body = new PassThrough();
    let head: Buffer | null = Buffer.alloc(0);
    const fail = (error: Error) => {
      if (head) reject(error);
      else body.destroy(error);
    };
    void (async () => {
      for await (const chunk of chunks) {
        if (!head) {
          if (!body.write(chunk)) await new Promise((done) => body.once('drain', done));
          continue;
        }
        head = Buffer.concat([head, chunk]);
        const at = head.indexOf(PRELUDE_DELIMITER);
        if (at < 0) continue;
        let prelude: RunnerPrelude;
        try {
          prelude = parsePrelude(head.subarray(0, at));
        } catch (error) {
          return fail(error as Error);
        }
        const rest = head.subarray(at + PRELUDE_DELIMITER.length);
        head = null;
        resolve({ prelude, body });
        if (rest.length > 0) body.write(rest);
      }
      if (head) fail(new FunctionHostError('instance_crashed', 'the function ended before it sent a status'));
      else body.end();
    })().catch(fail);
  });
}

function parsePrelude(bytes: Buffer): RunnerPrelude {
  const value = JSON.parse(bytes.toString('utf8')) as Partial<RunnerPrelude>;
  if (typeof value.statusCode !== 'number' || !Number.isInteger(value.statusCode))
    throw new FunctionHostError('instance_crashed', 'the runner sent no status');
  const headers: Record<string, string> = {};
  for (const [name, raw] of Object.entries(value.headers ?? {})) headers[name.toLowerCase()] = String(raw);
  return { statusCode: value.statusCode, headers, cookies: Array.isArray(value.cookies) ? value.cookies.map(String) : [] };
}

const OUTCOMES: readonly DoorOutcome[] = ['response', 'handler_error', 'invalid_response'];

/** The door's view of the runner's reply: header pairs (each cookie its own `set-cookie`), the outcome and the cold-start report. */
export function doorReplyFromPrelude(
  prelude: RunnerPrelude,
  body: Readable,
  fallbackInstance: string,
  waitedForCreation: boolean,
): DoorReply {
  const reported = prelude.headers[OUTCOME_HEADER];
  // A reply without the runner's report did not come from the runner: treat it as a failed handler.
  const outcome: DoorOutcome = OUTCOMES.includes(reported as DoorOutcome) ? (reported as DoorOutcome) : 'handler_error';
  const headers: [string, string][] = Object.entries(prelude.headers).filter(([name]) => !name.startsWith('x-slipway-runner-'));
  for (const cookie of prelude.cookies) headers.push(['set-cookie', cookie]);
  const bootMs = Number(prelude.headers[RUNNER_BOOT_MS_HEADER]);
  const coldStart = waitedForCreation || prelude.headers[RUNNER_COLD_START_HEADER] === 'true';
  return {
    outcome,
    status: prelude.statusCode,
    headers,
    body,
    coldStart,
    ...(coldStart && Number.isFinite(bootMs) ? { bootMs } : {}),
    instanceId: prelude.headers[RUNNER_INSTANCE_HEADER] || fallbackInstance,
  };
}

/** An `InvokeComplete` error code as the door's failure kind. */
export function hostFailureOf(errorCode: string | undefined): FunctionHostError {
  return /memory/i.test(errorCode ?? '')
    ? new FunctionHostError('out_of_memory', 'the function ran out of memory')
    : new FunctionHostError('instance_crashed', `the function failed (${errorCode ?? 'unknown'})`);
}

/** The payload chunks of an InvokeWithResponseStream reply; an error reported by Lambda ends it with a host failure. */
async function* payloadOf(events: AsyncIterable<InvokeWithResponseStreamResponseEvent>): AsyncIterable<Uint8Array> {
  for await (const event of events) {
    if (event.PayloadChunk?.Payload) yield event.PayloadChunk.Payload;
    else if (event.InvokeComplete?.ErrorCode) throw hostFailureOf(event.InvokeComplete.ErrorCode);
  }
}

function variable(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (the functions runtime of the stack sets it)`);
  return value;
}

/** True when the error is the SDK's error of that name. */
const isError = (error: unknown, name: string) => (error as { name?: string } | null)?.name === name;

export function createCloudFunctionHost(): FunctionHost {
  /** Lambda names known to exist and be active in this container. */
  const ready = new Map<string, Promise<boolean>>();

  /** Creates the bundle's Lambda when it does not exist yet; true when this request had to wait for it. */
  async function ensureFunction(fn: DeployedFunction, name: string): Promise<boolean> {
    try {
      const current = await lambda().send(new GetFunctionCommand({ FunctionName: name }));
      if (current.Configuration?.State === 'Active') return false;
    } catch (error) {
      if (!isError(error, 'ResourceNotFoundException')) throw error;
      const object = await s3().send(new GetObjectCommand({ Bucket: config.bucket('bundles'), Key: fn.bundle_key }));
      const bundle = Buffer.from(await object.Body!.transformToByteArray());
      try {
        await lambda().send(
          new CreateFunctionCommand({
            FunctionName: name,
            Description: `Slipway function ${fn.name} of project ${fn.project_id} (deployment ${fn.deployment_id})`.slice(0, 256),
            Runtime: 'nodejs22.x',
            Architectures: ['arm64'],
            Handler: 'index.handler',
            Role: variable(cloudHostVariables.roleArn),
            Code: { ZipFile: functionPackage(bundle) },
            Layers: [variable(cloudHostVariables.runnerLayerArn)],
            MemorySize: FUNCTION_MEMORY_MB,
            Timeout: USER_FUNCTION_TIMEOUT_SECONDS,
            VpcConfig: {
              SubnetIds: variable(cloudHostVariables.subnetIds).split(','),
              SecurityGroupIds: [variable(cloudHostVariables.securityGroupId)],
            },
            // context.env holds nothing the user set; the runner clears what Lambda itself puts there.
            Environment: { Variables: {} },
            Tags: functionLambdaTags(fn),
          }),
        );
      } catch (createError) {
        // Another router instance created it first: wait for it like for our own.
        if (!isError(createError, 'ResourceConflictException')) throw createError;
      }
    }
    // A new VPC function is Pending while Lambda attaches it to the subnets.
    await waitUntilFunctionActiveV2({ client: lambda(), maxWaitTime: 120 }, { FunctionName: name });
    return true;
  }

  return {
    async forwardHttp(fn: DeployedFunction, request: DoorForward, signal: AbortSignal): Promise<DoorReply> {
      const name = functionLambdaName(variable(cloudHostVariables.namePrefix), fn);
      let pending = ready.get(name);
      if (!pending) {
        pending = ensureFunction(fn, name);
        ready.set(name, pending);
        pending.catch(() => ready.delete(name));
      }
      let waited: boolean;
      try {
        // Only the request that created the function waited for it; later ones find it ready.
        waited = await pending;
        ready.set(name, Promise.resolve(false));
      } catch (error) {
        throw new FunctionHostError('start_failed', `the function's Lambda could not be made ready: ${String(error)}`);
      }

      const chunks: Buffer[] = [];
      if (request.body) for await (const chunk of request.body) chunks.push(Buffer.from(chunk as Buffer));
      const event: CloudRunnerEvent = {
        method: request.method,
        publicUrl: fn.url,
        query: request.query,
        headers: request.headers,
        bodyBase64: chunks.length > 0 ? Buffer.concat(chunks).toString('base64') : null,
      };
      let response;
      try {
        response = await lambda().send(
          new InvokeWithResponseStreamCommand({ FunctionName: name, Payload: Buffer.from(JSON.stringify(event)) }),
          { abortSignal: signal },
        );
      } catch (error) {
        if (signal.aborted) throw error;
        if (isError(error, 'ResourceNotFoundException')) ready.delete(name);
        // Throttled (the account's concurrency), payload over 6 MB, or the function gone: nothing ran.
        throw new FunctionHostError('start_failed', `invoke failed: ${String(error)}`);
      }
      if (!response.EventStream) throw new FunctionHostError('instance_crashed', 'the invoke reply has no stream');
      const { prelude, body } = await decodeRunnerStream(payloadOf(response.EventStream));
      return doorReplyFromPrelude(prelude, body, name, waited);
    },

    runQueued: (fn, request, budgetMs, signal) => runQueuedTask(fn, request, budgetMs, signal),
  };
}

// ---------------------------------------------------------------------------
// Queued invocations: one Fargate task of the runner image per invocation.

/** The runner's container in the task definition (infra/functions-runtime.ts). */
export const RUNNER_CONTAINER_NAME = 'runner';

/** The task's environment (lib/functions/runner/task.mjs reads the same names). */
export const TASK_VARIABLES = {
  bundleUrl: 'SLIPWAY_BUNDLE_URL',
  requestUrl: 'SLIPWAY_REQUEST_URL',
  resultUrl: 'SLIPWAY_RESULT_URL',
  consoleUrl: 'SLIPWAY_CONSOLE_URL',
  functionUrl: 'SLIPWAY_FUNCTION_URL',
} as const;

/** How the task entry exits (task.mjs `TASK_EXIT`). */
export const TASK_EXIT = { result: 0, crashed: 3, outOfMemory: 137, stopped: 143, failed: 1 } as const;

/** How long a task may take to be placed, pull the image and start; the budget runs from then. */
export function taskStartTimeoutMs(): number {
  const value = Number(process.env.FUNCTIONS_TASK_START_TIMEOUT_MS);
  return Number.isFinite(value) && value > 0 ? value : 90_000;
}

/** How often the worker looks at the task and the result object; FUNCTIONS_TASK_POLL_MS shortens it for tests. */
export function taskPollMs(): number {
  const value = Number(process.env.FUNCTIONS_TASK_POLL_MS);
  return Number.isFinite(value) && value > 0 ? value : 1000;
}

/** RunTask refuses overrides longer than this (the JSON of the override structure included). */
export const MAX_OVERRIDE_CHARS = 8192;

/** Presigned URLs outlive the task's start and budget with room to spare. */
const PRESIGN_SECONDS = 15 * 60;

/** The task's objects, under the invocation's prefix (lib/functions/invocations.ts keeps request.json, result.json and console.json there). */
export function queuedTaskKeys(invocation: { id: string; team_id: string }) {
  const prefix = `invocations/${invocation.team_id}/${invocation.id}/`;
  return { request: `${prefix}request.json`, result: `${prefix}task-result.json`, console: `${prefix}task-console.json` };
}

const ecs = lazyClient('ecs', (opts) => new ECSClient({ region: opts.region, endpoint: opts.endpoint }));

interface TaskResultObject {
  status: number;
  headers: [string, string][];
  body: string;
  outcome: 'response' | 'handler_error' | 'invalid_response' | 'start_failed';
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

async function objectExists(bucket: string, key: string): Promise<boolean> {
  try {
    await s3().send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return true;
  } catch (error) {
    const name = (error as { name?: string }).name;
    if (name === 'NotFound' || name === 'NoSuchKey') return false;
    throw error;
  }
}

async function readJson<T>(bucket: string, key: string): Promise<T | null> {
  try {
    const reply = await s3().send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return JSON.parse(await reply.Body!.transformToString('utf8')) as T;
  } catch (error) {
    const name = (error as { name?: string }).name;
    if (name === 'NoSuchKey' || name === 'NotFound' || error instanceof SyntaxError) return null;
    throw error;
  }
}

/** How a task that stopped without a result ended (no result object was found). */
export function stoppedTaskOutcome(
  task: Pick<Task, 'stoppedReason' | 'stopCode' | 'containers'>,
): 'out_of_memory' | 'crashed' | 'start_failed' {
  const container = task.containers?.find((c) => c.name === RUNNER_CONTAINER_NAME) ?? task.containers?.[0];
  if (/OutOfMemory/i.test(`${task.stoppedReason ?? ''} ${container?.reason ?? ''}`) || container?.exitCode === TASK_EXIT.outOfMemory)
    return 'out_of_memory';
  // The handler's process died without a result (a crash, process.exit): what the local host calls crashed.
  if (container?.exitCode === TASK_EXIT.crashed) return 'crashed';
  // Never placed, the image not pulled, the entry failed: the platform could not run it.
  return 'start_failed';
}

function log(level: 'INFO' | 'WARN' | 'ERROR', message: string, fields: Record<string, unknown>) {
  console.error(JSON.stringify({ level, message, ...fields }));
}

/**
 * One queued invocation in a fresh Fargate task (docs/functions.md, "Queued
 * invocations in the cloud"): presign the bundle and request GETs and the
 * result and console PUTs, RunTask, then poll the task and the result object
 * until the result appears or the task stops. The budget runs from the moment
 * the task is RUNNING; at its end the task is stopped (`timed_out`). A task
 * that is not running within the start bound is stopped and could not be run.
 */
async function runQueuedTask(fn: DeployedFunction, request: QueuedRequest, budgetMs: number, signal: AbortSignal): Promise<QueuedResult> {
  const called = Date.now();
  const bucket = config.bucket('bundles');
  const log_ = { function_id: fn.function_id, invocation_id: request.invocation?.id };
  if (signal.aborted) return { outcome: 'aborted', reply: null, console: [], runtimeMs: 0 };
  const invocation = request.invocation ?? { id: randomUUID(), team_id: fn.team_id };
  const keys = queuedTaskKeys(invocation);
  let taskArn: string;
  try {
    if (!request.invocation) {
      // Not a stored invocation (a direct caller): store the request the task will read.
      const stored = { method: request.method, query: request.query, headers: request.headers, body: request.body.toString('base64') };
      await s3().send(
        new PutObjectCommand({ Bucket: bucket, Key: keys.request, Body: JSON.stringify(stored), ContentType: 'application/json' }),
      );
    }
    const presign = (command: GetObjectCommand | PutObjectCommand) => getSignedUrl(s3(), command, { expiresIn: PRESIGN_SECONDS });
    const [bundleUrl, requestUrl, resultUrl, consoleUrl] = await Promise.all([
      presign(new GetObjectCommand({ Bucket: bucket, Key: fn.bundle_key })),
      presign(new GetObjectCommand({ Bucket: bucket, Key: keys.request })),
      presign(new PutObjectCommand({ Bucket: bucket, Key: keys.result })),
      presign(new PutObjectCommand({ Bucket: bucket, Key: keys.console })),
    ]);
    const overrides = {
      containerOverrides: [
        {
          name: RUNNER_CONTAINER_NAME,
          environment: [
            { name: TASK_VARIABLES.bundleUrl, value: bundleUrl },
            { name: TASK_VARIABLES.requestUrl, value: requestUrl },
            { name: TASK_VARIABLES.resultUrl, value: resultUrl },
            { name: TASK_VARIABLES.consoleUrl, value: consoleUrl },
            { name: TASK_VARIABLES.functionUrl, value: fn.url },
          ],
        },
      ],
    };
    const overrideChars = JSON.stringify(overrides).length;
    if (overrideChars > MAX_OVERRIDE_CHARS)
      throw new Error(`the task overrides are ${overrideChars} characters, over RunTask's ${MAX_OVERRIDE_CHARS}`);
    const started = await ecs().send(
      new RunTaskCommand({
        cluster: variable(cloudHostVariables.taskCluster),
        taskDefinition: variable(cloudHostVariables.taskDefinitionArn),
        launchType: 'FARGATE',
        count: 1,
        // At most 36 characters: an invocation id fits, and tells operators which invocation a task ran.
        startedBy: invocation.id.slice(0, 36),
        networkConfiguration: {
          awsvpcConfiguration: {
            subnets: variable(cloudHostVariables.subnetIds).split(','),
            securityGroups: [variable(cloudHostVariables.securityGroupId)],
            assignPublicIp: 'DISABLED',
          },
        },
        overrides,
      }),
    );
    const task = started.tasks?.[0];
    if (!task?.taskArn) {
      const failure = started.failures?.map((f) => `${f.reason ?? 'unknown'}${f.detail ? ` (${f.detail})` : ''}`).join('; ');
      throw new Error(`RunTask started no task: ${failure || 'no reason given'}`);
    }
    taskArn = task.taskArn;
  } catch (error) {
    log('WARN', 'queued run: the task could not be started', { ...log_, error: String(error) });
    return { outcome: 'start_failed', reply: null, console: [], runtimeMs: Date.now() - called };
  }

  const cluster = variable(cloudHostVariables.taskCluster);
  let runningSince: number | null = null;
  const runtime = () => (runningSince === null ? 0 : Date.now() - runningSince);
  const stop = async (reason: string) => {
    try {
      await ecs().send(new StopTaskCommand({ cluster, task: taskArn, reason }));
    } catch (error) {
      log('ERROR', 'queued run: StopTask failed', { ...log_, task: taskArn, error: String(error) });
    }
  };
  const finished = async (): Promise<QueuedResult | null> => {
    const result = await readJson<TaskResultObject>(bucket, keys.result);
    if (!result) return null;
    const console = (await readJson<ConsoleLine[]>(bucket, keys.console)) ?? [];
    if (result.outcome === 'start_failed') return { outcome: 'start_failed', reply: null, console, runtimeMs: runtime() };
    return {
      outcome: result.outcome,
      reply: { status: result.status, headers: result.headers, body: Buffer.from(result.body, 'base64') },
      console,
      runtimeMs: runtime(),
    };
  };
  /** After a stop, the task's entry uploads what the handler printed; wait a little for it. */
  const consoleAfterStop = async (): Promise<ConsoleLine[]> => {
    const until = Date.now() + Math.min(5000, taskPollMs() * 10);
    for (;;) {
      if (await objectExists(bucket, keys.console).catch(() => false))
        return (await readJson<ConsoleLine[]>(bucket, keys.console).catch(() => null)) ?? [];
      if (Date.now() >= until) return [];
      await sleep(taskPollMs(), new AbortController().signal);
    }
  };

  try {
    for (;;) {
      if (signal.aborted) {
        await stop('Slipway: the platform stopped');
        return { outcome: 'aborted', reply: null, console: [], runtimeMs: runtime() };
      }
      const described = await ecs().send(new DescribeTasksCommand({ cluster, tasks: [taskArn] }));
      const task = described.tasks?.[0];
      if (runningSince === null && (task?.lastStatus === 'RUNNING' || task?.startedAt)) runningSince = Date.now();
      if (await objectExists(bucket, keys.result)) {
        const result = await finished();
        if (result) return result;
      }
      if (task?.lastStatus === 'STOPPED') {
        // The result may have landed between the two reads.
        const result = await finished();
        if (result) return result;
        const outcome = stoppedTaskOutcome(task);
        log('WARN', 'queued run: the task stopped without a result', {
          ...log_,
          task: taskArn,
          outcome,
          stopped_reason: task.stoppedReason,
          stop_code: task.stopCode,
        });
        return { outcome, reply: null, console: outcome === 'start_failed' ? [] : await consoleAfterStop(), runtimeMs: runtime() };
      }
      if (runningSince !== null && Date.now() - runningSince >= budgetMs) {
        await stop('Slipway: the invocation reached its time budget');
        return { outcome: 'timed_out', reply: null, console: await consoleAfterStop(), runtimeMs: runtime() };
      }
      if (runningSince === null && Date.now() - called >= taskStartTimeoutMs()) {
        await stop('Slipway: the task did not start in time');
        log('WARN', 'queued run: the task did not start in time', { ...log_, task: taskArn, last_status: task?.lastStatus });
        return { outcome: 'start_failed', reply: null, console: [], runtimeMs: 0 };
      }
      const remaining = runningSince === null ? taskPollMs() : Math.min(taskPollMs(), Math.max(0, budgetMs - (Date.now() - runningSince)));
      await sleep(remaining, signal);
    }
  } catch (error) {
    // ECS or S3 failed while waiting: stop the task rather than leave it running unwatched.
    await stop('Slipway: the worker lost track of the task');
    log('ERROR', 'queued run: waiting for the task failed', { ...log_, task: taskArn, error: String(error) });
    return { outcome: 'start_failed', reply: null, console: [], runtimeMs: runtime() };
  }
}
