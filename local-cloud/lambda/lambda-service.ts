import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventStreamCodec, type Message } from '@smithy/core/event-streams';
import { unzipSync } from 'fflate';
import { LambdaFunctionHost, LambdaInvokeError, type StreamedReply } from './lambda-host.ts';
import { checkUserPackage, type CreateFunctionRequest, userFunctionConfiguration, userLambdaOf } from './user-packages.ts';
import { localConfig } from '../../lib/local-config.ts';

/**
 * The Lambda service of the synthesized mode for the Lambdas made at run time: the user-function Lambdas the
 * functions router creates (lib/functions/hosts/cloud/cloud-host.ts). moto's Lambda needs Docker to invoke, so
 * the IAM proxy hands a Lambda's allowed Lambda API calls here instead (iam-proxy.ts `services`). It keeps each
 * package and configuration, and runs the package's entry with its layers at /opt in the same execution
 * environments as the template's Lambdas (lambda-host.ts: a worker thread each, one invocation at a time).
 * CreateFunction, GetFunction, GetFunctionConfiguration, InvokeWithResponseStream, ListFunctions, ListTags and
 * DeleteFunction, in Lambda's REST-JSON protocol, with its error names and its 6 MB request payload limit.
 */

/** Lambda's limit on a synchronous invocation's request payload (InvokeWithResponseStream included). */
export const INVOKE_PAYLOAD_LIMIT_BYTES = 6 * 1024 * 1024;

/**
 * How many environments one user-function Lambda runs at once here. In the cloud it is the account's concurrency
 * (1,000 by default), and the door caps a function at 30 requests; here it is LOCAL_DOOR_LAMBDA_MAX_ENVIRONMENTS
 * (40), above the door's cap so that the door's cap is the one a test sees, and bounded so that a burst does
 * not boot hundreds of threads on a small machine: the rest wait for an environment.
 */
const maxEnvironments = () => localConfig.doorLambdaMaxEnvironments();

interface UserLambda {
  configuration: Record<string, unknown>;
  tags: Record<string, string>;
  host: LambdaFunctionHost;
  dir: string;
}

export interface LocalLambdaService {
  /** Answers one Lambda API request the IAM proxy allowed. */
  handle(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void>;
  /** How many CreateFunction calls named this function (refused ones too): whether a request had to make it. */
  createCalls(name: string): number;
  stop(): Promise<void>;
}

class LambdaApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

const codec = new EventStreamCodec(
  (bytes) => Buffer.from(bytes).toString('utf8'),
  (text) => Buffer.from(text, 'utf8'),
);

function event(type: 'PayloadChunk' | 'InvokeComplete', body: Uint8Array): Uint8Array {
  const message: Message = {
    headers: {
      ':event-type': { type: 'string', value: type },
      ':message-type': { type: 'string', value: 'event' },
      ':content-type': { type: 'string', value: type === 'PayloadChunk' ? 'application/octet-stream' : 'application/json' },
    },
    body,
  };
  return codec.encode(message);
}

function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const text = value === null ? '' : JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'x-amzn-requestid': randomUUID(), ...headers });
  res.end(text);
}

/** A stream's writes, waiting for the reader (the router) and giving up silently once it has gone. */
function writerOf(res: ServerResponse) {
  return async (bytes: Uint8Array) => {
    if (res.destroyed) return;
    if (res.write(bytes)) return;
    // Each wait removes both listeners: a long streamed reply waits many times, and a listener left behind per wait
    // added up to Node's MaxListenersExceededWarning.
    await new Promise<void>((resolve) => {
      const done = () => {
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      res.on('drain', done);
      res.on('close', done);
    });
  };
}

/** InvokeWithResponseStream: the event stream of the reply's bytes (the prelude first), then InvokeComplete. */
async function invoke(fn: UserLambda, body: Buffer, res: ServerResponse): Promise<void> {
  if (body.length > INVOKE_PAYLOAD_LIMIT_BYTES) {
    throw new LambdaApiError(
      413,
      'RequestEntityTooLargeException',
      `Request must be smaller than ${INVOKE_PAYLOAD_LIMIT_BYTES} bytes for the InvokeFunction operation`,
    );
  }
  let input: unknown;
  try {
    input = body.length ? JSON.parse(body.toString('utf8')) : {};
  } catch {
    throw new LambdaApiError(400, 'InvalidRequestContentException', 'Could not parse request body into json');
  }
  res.writeHead(200, {
    'content-type': 'application/vnd.amazon.eventstream',
    'x-amz-executed-version': '$LATEST',
    'x-amzn-requestid': randomUUID(),
  });
  const write = writerOf(res);
  let complete: Record<string, string> = {};
  try {
    const reply = await fn.host.invoke(input);
    if (reply && typeof reply === 'object' && 'body' in reply && 'head' in reply) {
      const { head, body: stream } = reply as StreamedReply;
      // What HttpResponseStream.from writes first: the prelude JSON, then eight NUL bytes.
      await write(event('PayloadChunk', Buffer.concat([Buffer.from(JSON.stringify(head)), Buffer.alloc(8)])));
      for await (const chunk of stream) await write(event('PayloadChunk', chunk as Buffer));
    } else {
      await write(event('PayloadChunk', Buffer.from(JSON.stringify(reply))));
    }
  } catch (error) {
    const failed = error instanceof LambdaInvokeError ? error : new LambdaInvokeError(fn.host.fn.name, 'Unhandled', String(error));
    complete = { ErrorCode: failed.errorType, ErrorDetails: failed.message };
  }
  await write(event('InvokeComplete', Buffer.from(JSON.stringify({ ...complete, LogResult: '' }))));
  if (!res.destroyed) res.end();
}

interface ServiceOptions {
  region: string;
  accountId: string;
  layers: Map<string, string>;
}

/** The functions the service holds, by name, and how many CreateFunction calls named each. */
class UserLambdas {
  readonly byName = new Map<string, UserLambda>();
  readonly creates = new Map<string, number>();

  constructor(private readonly options: ServiceOptions) {}

  arnOf(name: string): string {
    return `arn:aws:lambda:${this.options.region}:${this.options.accountId}:function:${name}`;
  }

  /** A function by the name or ARN (qualifier dropped) of a request's path; Lambda's 404 when there is none. */
  named(raw: string): UserLambda {
    const name = decodeURIComponent(raw)
      .replace(/^arn:aws:lambda:[^:]*:\d+:function:/, '')
      .split(':')[0]!;
    const found = this.byName.get(name);
    if (!found) throw new LambdaApiError(404, 'ResourceNotFoundException', `Function not found: ${this.arnOf(name)}`);
    return found;
  }
}

const packagesRoot = () => join(tmpdir(), 'slipway-user-lambdas');

/** CreateFunction: the package checked against what the cloud host uploads, unpacked, the function Pending. */
function createFunction(lambdas: UserLambdas, options: ServiceOptions, body: Buffer): Record<string, unknown> {
  const request = JSON.parse(body.toString('utf8')) as CreateFunctionRequest;
  const name = String(request.FunctionName ?? '');
  lambdas.creates.set(name, (lambdas.creates.get(name) ?? 0) + 1);
  if (lambdas.byName.has(name)) throw new LambdaApiError(409, 'ResourceConflictException', `Function already exist: ${name}`);
  const zip = Buffer.from(String(request.Code?.ZipFile ?? ''), 'base64');
  let files: Record<string, Uint8Array>;
  try {
    files = unzipSync(zip);
  } catch {
    throw new LambdaApiError(
      400,
      'InvalidParameterValueException',
      'Could not unzip uploaded file. Please check your file, then try again.',
    );
  }
  const problem = checkUserPackage(request, files, options.layers);
  if (problem) throw new LambdaApiError(400, 'InvalidParameterValueException', problem);
  mkdirSync(packagesRoot(), { recursive: true });
  const dir = mkdtempSync(join(packagesRoot(), `${name.slice(-16)}-`));
  for (const [file, data] of Object.entries(files)) writeFileSync(join(dir, file), data);
  const configuration = userFunctionConfiguration(request, zip, lambdas.arnOf(name));
  const host = new LambdaFunctionHost(userLambdaOf(configuration, dir, options), maxEnvironments());
  lambdas.byName.set(name, { configuration, tags: request.Tags ?? {}, host, dir });
  // A VPC function is Pending while Lambda attaches it; the caller waits for Active (GetFunction).
  return { ...configuration, State: 'Pending', StateReasonCode: 'Creating' };
}

async function deleteFunction(lambdas: UserLambdas, raw: string): Promise<void> {
  const fn = lambdas.named(raw);
  lambdas.byName.delete(String(fn.configuration.FunctionName));
  await fn.host.stop();
  rmSync(fn.dir, { recursive: true, force: true });
}

/** One Lambda API request, by its method and REST path, to the operation this service offers. */
async function route(
  lambdas: UserLambdas,
  options: ServiceOptions,
  request: { method: string; path: string; body: Buffer },
  res: ServerResponse,
): Promise<void> {
  const { method, path, body } = request;
  const fn = /^\/(\d{4}-\d\d-\d\d)\/functions\/([^/]+)(\/[a-z-]+)?\/?$/.exec(path);
  if (method === 'POST' && /^\/2015-03-31\/functions\/?$/.test(path)) return sendJson(res, 201, createFunction(lambdas, options, body));
  if (method === 'GET' && /^\/2015-03-31\/functions\/?$/.test(path))
    return sendJson(res, 200, { Functions: [...lambdas.byName.values()].map((entry) => entry.configuration) });
  const tags = /^\/2017-03-31\/tags\/(.+)$/.exec(path);
  if (method === 'GET' && tags) return sendJson(res, 200, { Tags: lambdas.named(tags[1]!).tags });
  if (fn && method === 'POST' && fn[3] === '/response-streaming-invocations') return invoke(lambdas.named(fn[2]!), body, res);
  if (fn && method === 'GET' && !fn[3]) {
    const found = lambdas.named(fn[2]!);
    return sendJson(res, 200, { Configuration: found.configuration, Code: { RepositoryType: 'S3', Location: '' }, Tags: found.tags });
  }
  if (fn && method === 'GET' && fn[3] === '/configuration') return sendJson(res, 200, lambdas.named(fn[2]!).configuration);
  if (fn && method === 'DELETE' && !fn[3]) return (await deleteFunction(lambdas, fn[2]!), sendJson(res, 204, null));
  throw new LambdaApiError(400, 'InvalidParameterValueException', `The local Lambda service does not offer ${method} ${path}`);
}

export function createLocalLambdaService(options: ServiceOptions): LocalLambdaService {
  const lambdas = new UserLambdas(options);
  return {
    async handle(req, res, body) {
      const path = new URL(req.url ?? '/', 'http://lambda').pathname;
      try {
        await route(lambdas, options, { method: (req.method ?? 'GET').toUpperCase(), path, body }, res);
      } catch (error) {
        if (res.headersSent) return void res.end();
        if (!(error instanceof LambdaApiError)) throw error;
        sendJson(res, error.status, { Type: 'User', message: error.message }, { 'x-amzn-errortype': error.type });
      }
    },
    createCalls: (name) => lambdas.creates.get(name) ?? 0,
    async stop() {
      await Promise.all([...lambdas.byName.values()].map((entry) => entry.host.stop()));
      for (const entry of lambdas.byName.values()) rmSync(entry.dir, { recursive: true, force: true });
      lambdas.byName.clear();
    },
  };
}
