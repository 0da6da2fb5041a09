import { randomUUID } from 'node:crypto';
import { PassThrough, type Readable } from 'node:stream';
import { Worker } from 'node:worker_threads';
import { localConfig } from '../../lib/local-config.ts';

/** One AWS::Lambda::Function of the template, as the synthesized mode runs it. */
export interface SynthLambda {
  logicalId: string;
  name: string;
  arn: string;
  /** The asset folder `cdk deploy` zips and uploads (cdk.out/asset.{hash}). */
  assetDir: string;
  /** The template's Handler (`index.handler`). */
  handler: string;
  timeoutSeconds: number;
  memoryMb: number;
  /** The template's Environment, resolved, plus the runtime's own variables and this Lambda's credentials. */
  environment: Record<string, string>;
  /** Logical id of the execution role. */
  roleLogicalId: string;
  /** The folders of its layers, in order: Lambda puts their files under /opt. */
  layers?: string[];
}

export class LambdaInvokeError extends Error {
  constructor(
    readonly functionName: string,
    readonly errorType: string,
    message: string,
  ) {
    super(`${functionName}: ${errorType}: ${message}`);
  }
}

/**
 * A streamed reply: its head and body, and `callerGone`, which tells the function its caller's connection closed
 * before the body's end (its response stream closes; a live tail's handler stops on that).
 */
export type StreamedReply = { head: Record<string, unknown>; body: Readable; callerGone(): void };

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
  stream?: PassThrough;
  timer: NodeJS.Timeout;
}

interface Environment {
  worker: Worker;
  ready: Promise<void>;
  pending: Map<string, Pending>;
  dead: boolean;
}

const workerFile = new URL('./lambda-worker.mjs', import.meta.url);

/** Lambda's log stream of one execution environment (`2026/11/26/[$LATEST]{id}`): the environment's own name. */
const logStreamName = () => `${new Date().toISOString().slice(0, 10).replaceAll('-', '/')}/[$LATEST]${randomUUID().replaceAll('-', '')}`;

/**
 * The execution environments of one Lambda: a worker thread each, made on
 * demand (a cold start: the asset is imported in it), serving one invocation
 * at a time, up to `maxEnvironments` at once (then invocations wait, as
 * throttled ones would be retried). A timed-out invocation ends its
 * environment, as Lambda's does.
 */
export class LambdaFunctionHost {
  private readonly idle: Environment[] = [];
  private readonly all = new Set<Environment>();
  private readonly waiting: (() => void)[] = [];
  private stopped = false;
  readonly importMs: number[] = [];
  invocations = 0;

  constructor(
    readonly fn: SynthLambda,
    private readonly maxEnvironments = 10,
    /** Local variables sent with each invocation (lambdas.ts localOverlay); null unsets one. */
    private readonly overlay: () => Record<string, string | null> = () => ({}),
  ) {}

  private start(): Environment {
    const overlay = Object.entries(this.overlay()).filter((entry): entry is [string, string] => entry[1] !== null);
    const worker = new Worker(workerFile, {
      // Local variables from the start too: a module may read one at import (the logger's level).
      env: { ...this.fn.environment, ...Object.fromEntries(overlay), AWS_LAMBDA_LOG_STREAM_NAME: logStreamName() },
      workerData: {
        assetDir: this.fn.assetDir,
        handler: this.fn.handler,
        functionName: this.fn.name,
        memoryMb: this.fn.memoryMb,
        layers: this.fn.layers ?? [],
      },
      // The template's MemorySize bounds the heap, as the Lambda's memory does.
      resourceLimits: { maxOldGenerationSizeMb: this.fn.memoryMb },
      stdout: false,
      stderr: false,
    });
    const environment: Environment = { worker, pending: new Map(), dead: false, ready: Promise.resolve() };
    environment.ready = new Promise<void>((resolve, reject) => {
      worker.on('message', (message: any) => {
        if (message.type === 'ready') {
          this.importMs.push(message.importMs);
          return resolve();
        }
        if (message.type === 'init-error') return reject(new LambdaInvokeError(this.fn.name, 'Runtime.InitError', message.error.message));
        if (message.type === 'out-of-memory') return this.end(environment, this.outOfMemory(`${message.usedMb} MB used`));
        this.onMessage(environment, message);
      });
      worker.on('error', (error) => {
        reject(error);
        const oom = (error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY';
        this.end(
          environment,
          oom ? this.outOfMemory(error.message) : new LambdaInvokeError(this.fn.name, 'Runtime.ExitError', error.message),
        );
      });
      worker.on('exit', (code) => {
        reject(new LambdaInvokeError(this.fn.name, 'Runtime.ExitError', `exited with code ${code} during init`));
        this.end(environment, new LambdaInvokeError(this.fn.name, 'Runtime.ExitError', `the environment exited (code ${code})`));
      });
    });
    this.all.add(environment);
    return environment;
  }

  private outOfMemory(detail: string): LambdaInvokeError {
    return new LambdaInvokeError(this.fn.name, 'Runtime.OutOfMemory', `Runtime exited with error: signal: killed (${detail})`);
  }

  private onMessage(environment: Environment, message: any): void {
    const pending = environment.pending.get(message.id);
    if (!pending) return;
    const settle = () => {
      clearTimeout(pending.timer);
      environment.pending.delete(message.id);
      this.release(environment);
    };
    switch (message.type) {
      case 'result':
        settle();
        pending.resolve(message.value);
        return;
      case 'error':
        settle();
        if (pending.stream)
          return void pending.stream.destroy(new LambdaInvokeError(this.fn.name, message.error.name, message.error.message));
        pending.reject(new LambdaInvokeError(this.fn.name, message.error.name, message.error.message));
        return;
      case 'head':
        pending.stream = new PassThrough();
        pending.resolve(this.streamed(environment, message.id, message.metadata, pending.stream));
        return;
      case 'chunk':
        if (!pending.stream) {
          // Written without a head: Lambda's function URL answers 200 with the bytes as they come.
          pending.stream = new PassThrough();
          pending.resolve(this.streamed(environment, message.id, { statusCode: 200 }, pending.stream));
        }
        this.take(environment, message.id, pending.stream, Buffer.from(message.data));
        return;
      case 'body-end':
        if (!pending.stream)
          pending.resolve(this.streamed(environment, message.id, { statusCode: 200 }, (pending.stream = new PassThrough())));
        pending.stream.end();
        return;
      case 'cut':
        // The function destroyed its stream mid-body; the environment is released when its handler returns.
        pending.stream?.destroy(new LambdaInvokeError(this.fn.name, 'Runtime.ResponseStreamCut', 'the response stream was destroyed'));
        return;
      case 'end':
        settle();
        if (pending.stream?.destroyed || pending.stream?.writableEnded) return;
        if (!pending.stream)
          pending.resolve(this.streamed(environment, message.id, { statusCode: 200 }, new PassThrough().end() as PassThrough));
        else pending.stream.end();
        return;
    }
  }

  private streamed(environment: Environment, id: string, head: Record<string, unknown>, body: PassThrough): StreamedReply {
    return {
      head,
      body,
      callerGone: () => {
        if (!environment.dead && environment.pending.has(id)) environment.worker.postMessage({ gone: id });
      },
    };
  }

  /** Passes a chunk on and acknowledges it once the reader has room (a destroyed stream takes everything). */
  private take(environment: Environment, id: string, stream: PassThrough, chunk: Buffer): void {
    const ack = () => {
      if (!environment.dead) environment.worker.postMessage({ ack: id });
    };
    if (stream.destroyed || stream.write(chunk)) {
      ack();
      return;
    }
    const resume = () => (stream.off('drain', resume), stream.off('close', resume), ack());
    stream.on('drain', resume);
    stream.on('close', resume);
  }

  private end(environment: Environment, error: Error): void {
    if (environment.dead) return;
    environment.dead = true;
    this.all.delete(environment);
    const index = this.idle.indexOf(environment);
    if (index >= 0) this.idle.splice(index, 1);
    for (const pending of environment.pending.values()) {
      clearTimeout(pending.timer);
      if (pending.stream) pending.stream.destroy(error);
      else pending.reject(error);
    }
    environment.pending.clear();
    void environment.worker.terminate();
    this.waiting.shift()?.();
  }

  private release(environment: Environment): void {
    if (environment.dead || this.stopped) return;
    this.idle.push(environment);
    this.waiting.shift()?.();
  }

  private async acquire(): Promise<Environment> {
    for (;;) {
      if (this.stopped) throw new LambdaInvokeError(this.fn.name, 'Runtime.Stopped', 'the local platform is stopping');
      // The environment idle longest first (Lambda's own choice is unspecified): warm environments take turns, so a
      // request can reach the one a late handler has just left.
      const idle = this.idle.shift();
      if (idle) return idle;
      if (this.all.size < this.maxEnvironments) return this.start();
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
  }

  /** Starts one environment (a cold start) and returns how long the asset's import took, in ms. */
  async coldStart(): Promise<number> {
    const environment = this.start();
    try {
      await environment.ready;
    } catch (error) {
      this.end(environment, error as Error);
      throw error;
    }
    this.release(environment);
    return this.importMs.at(-1)!;
  }

  /** Invokes the function with one event; a streaming handler resolves with its head and body. */
  async invoke(event: unknown): Promise<unknown> {
    const environment = await this.acquire();
    try {
      await environment.ready;
    } catch (error) {
      this.end(environment, error as Error);
      throw error;
    }
    this.invocations += 1;
    const id = randomUUID();
    // The handler's deadline (context.getRemainingTimeInMillis) stretches with the end, as the source mode's does: a
    // route answers 503 when its time is up (lib/http/pipeline.ts), which a busy machine must not cause.
    const endsInMs = this.fn.timeoutSeconds * 1000 * localConfig.lambdaTimeoutScale();
    const deadline = Date.now() + endsInMs;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.end(
          environment,
          new LambdaInvokeError(this.fn.name, 'Sandbox.Timedout', `Task timed out after ${this.fn.timeoutSeconds.toFixed(2)} seconds`),
        );
      }, endsInMs);
      environment.pending.set(id, { resolve, reject, timer });
      environment.worker.postMessage({ id, event, deadline, overlay: this.overlay() });
    });
  }

  /** Ends every environment; an invocation in progress fails (its caller, a queue's poller say, stops waiting). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const resolve of this.waiting.splice(0)) resolve();
    const environments = [...this.all];
    const stopping = new LambdaInvokeError(this.fn.name, 'Runtime.Stopped', 'the local platform is stopping');
    for (const environment of environments) this.end(environment, stopping);
    await Promise.all(environments.map((environment) => environment.worker.terminate()));
    this.all.clear();
    this.idle.length = 0;
  }
}
