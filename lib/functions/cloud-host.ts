import { createHash } from 'node:crypto';
import { PassThrough, type Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import {
  CreateFunctionCommand,
  GetFunctionCommand,
  InvokeWithResponseStreamCommand,
  LambdaClient,
  waitUntilFunctionActiveV2,
  type InvokeWithResponseStreamResponseEvent,
} from '@aws-sdk/client-lambda';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { lazyClient } from '../aws/clients.ts';
import { s3 } from '../aws/s3.ts';
import { config } from '../config.ts';
import { FunctionHostError, type DoorForward, type DoorOutcome, type DoorReply, type FunctionHost } from './host.ts';
import { FUNCTION_MEMORY_MB, type DeployedFunction } from './model.ts';

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
} as const;

/** Headers of the runner's report; the door never forwards `x-slipway-*`. */
export const RUNNER_OUTCOME_HEADER = 'x-slipway-runner-outcome';
export const RUNNER_COLD_START_HEADER = 'x-slipway-runner-cold-start';
export const RUNNER_BOOT_MS_HEADER = 'x-slipway-runner-boot-ms';
export const RUNNER_INSTANCE_HEADER = 'x-slipway-runner-instance';

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
  flat['${'x-slipway-runner-cold-start'}'] = String(wasCold);
  if (wasCold) flat['${'x-slipway-runner-boot-ms'}'] = String(bootMs);
  flat['${'x-slipway-runner-instance'}'] = instance;
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
  if (typeof value.statusCode !== 'number' || !Number.isInteger(value.statusCode)) throw new FunctionHostError('instance_crashed', 'the runner sent no status');
  const headers: Record<string, string> = {};
  for (const [name, raw] of Object.entries(value.headers ?? {})) headers[name.toLowerCase()] = String(raw);
  return { statusCode: value.statusCode, headers, cookies: Array.isArray(value.cookies) ? value.cookies.map(String) : [] };
}

const OUTCOMES: readonly DoorOutcome[] = ['response', 'handler_error', 'invalid_response'];

/** The door's view of the runner's reply: header pairs (each cookie its own `set-cookie`), the outcome and the cold-start report. */
export function doorReplyFromPrelude(prelude: RunnerPrelude, body: Readable, fallbackInstance: string, waitedForCreation: boolean): DoorReply {
  const reported = prelude.headers[RUNNER_OUTCOME_HEADER];
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

const lambda = lazyClient('lambda', (opts) => new LambdaClient({ region: opts.region, endpoint: opts.endpoint }));

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
            Tags: { 'slipway:function-id': fn.function_id, 'slipway:team-id': fn.team_id },
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

    // The queued door's Fargate task per invocation (RunTask of the runner image) is not built yet
    // (docs/functions.md, "Queued invocations in the cloud"): every queued run ends as the spec's
    // platform-issue sentence rather than pretending to run.
    async runQueued(fn: DeployedFunction) {
      console.error(JSON.stringify({ level: 'ERROR', message: 'queued runs are not built for the cloud host', function_id: fn.function_id }));
      return { outcome: 'start_failed', reply: null, console: [], runtimeMs: 0 };
    },
  };
}
