// One Lambda execution environment of the synthesized mode: a worker thread
// with the function's own environment (its template variables and its own
// credentials), which imports the asset's handler once and then answers one
// invocation at a time, as a Lambda environment does. Plain JavaScript: it
// loads the bundle `cdk deploy` uploads, never the TypeScript sources.
import { existsSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Writable } from 'node:stream';
import { getHeapStatistics } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';

const { assetDir, handler: handlerSetting, functionName, memoryMb, layers = [] } = workerData;

// A layer's files are under /opt in Lambda: an import of /opt/... resolves to the first layer folder that has it.
if (layers.length > 0) {
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const path = specifier.startsWith('file:///opt/') ? fileURLToPath(specifier) : specifier;
      if (!path.startsWith('/opt/')) return nextResolve(specifier, context);
      const found = layers.map((dir) => join(dir, path.slice('/opt/'.length))).find((file) => existsSync(file));
      return found ? { url: pathToFileURL(found).href, shortCircuit: true } : nextResolve(specifier, context);
    },
  });
}

/**
 * Lambda ends an environment whose memory passes its MemorySize. The heap is bounded by the worker's
 * resourceLimits; Buffers live outside it, so their total (V8's external memory of this thread) is checked
 * whenever the function hands the runtime a reply or a chunk, and every 50 ms.
 */
function checkMemory() {
  const { used_heap_size: heap, external_memory: external } = getHeapStatistics();
  if (heap + external <= memoryMb * 1024 * 1024) return;
  parentPort.postMessage({ type: 'out-of-memory', usedMb: Math.round((heap + external) / 1024 / 1024) });
  process.exit(137);
}
setInterval(checkMemory, 50).unref();

if ((process.env.NODE_OPTIONS ?? '').includes('--enable-source-maps')) process.setSourceMapsEnabled(true);

/** The pending write of each invocation's stream, until the runtime acknowledges its chunk. */
const written = new Map();
/** Each streaming invocation's reply stream, while it runs: the host says when its caller went away. */
const replies = new Map();

/** The runtime's streaming API (`awslambda`): a streamed reply posts its head, then its chunks. */
const STREAMING = Symbol('streaming');
class ReplyStream extends Writable {
  constructor(id) {
    super();
    this.id = id;
  }
  // Each chunk waits for the runtime to take it (an ack), so a caller that reads slowly holds the function back,
  // as Lambda's streamed response does.
  _write(chunk, _encoding, done) {
    checkMemory();
    written.set(this.id, done);
    parentPort.postMessage({ id: this.id, type: 'chunk', data: Buffer.from(chunk) });
  }
  // The response ends when the stream ends (the runtime's response request completes); the handler may go on.
  _final(done) {
    parentPort.postMessage({ id: this.id, type: 'body-end' });
    done();
  }
  // Destroyed before its end (a budget cut mid-body): the caller's connection is cut, not ended.
  _destroy(error, done) {
    if (!this.writableFinished) parentPort.postMessage({ id: this.id, type: 'cut' });
    done(error);
  }
}
globalThis.awslambda = {
  streamifyResponse(fn) {
    fn[STREAMING] = true;
    return fn;
  },
  HttpResponseStream: {
    from(stream, metadata) {
      checkMemory();
      parentPort.postMessage({ id: stream.id, type: 'head', metadata: JSON.parse(JSON.stringify(metadata ?? {})) });
      return stream;
    },
  },
};

function moduleFile() {
  const dot = handlerSetting.lastIndexOf('.');
  const base = handlerSetting.slice(0, dot);
  for (const extension of ['.js', '.mjs', '.cjs']) {
    const file = join(assetDir, base + extension);
    if (existsSync(file)) return { file, exportName: handlerSetting.slice(dot + 1) };
  }
  throw new Error(`Runtime.ImportModuleError: Cannot find module '${base}' in ${assetDir}`);
}

const started = performance.now();
let handler;
try {
  const { file, exportName } = moduleFile();
  const mod = await import(pathToFileURL(file).href);
  handler = mod[exportName];
  if (typeof handler !== 'function') throw new Error(`Runtime.HandlerNotFound: ${handlerSetting} is undefined or not exported`);
  parentPort.postMessage({ type: 'ready', importMs: performance.now() - started });
} catch (error) {
  parentPort.postMessage({ type: 'init-error', error: { name: error.name, message: error.message, stack: error.stack } });
}

function context(id, deadline) {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: process.env.SLIPWAY_LOCAL_FUNCTION_ARN ?? functionName,
    memoryLimitInMB: String(memoryMb),
    awsRequestId: id,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
}

parentPort.on('message', async ({ id, event, deadline, overlay, ack, gone }) => {
  if (ack) {
    const done = written.get(ack);
    written.delete(ack);
    return done?.();
  }
  // The caller's connection closed before the body's end: the function's stream closes (no error to throw).
  if (gone) return void replies.get(gone)?.destroy();
  for (const [name, value] of Object.entries(overlay ?? {})) {
    if (value === null) delete process.env[name];
    else process.env[name] = value;
  }
  try {
    if (handler[STREAMING]) {
      const stream = new ReplyStream(id);
      replies.set(id, stream);
      try {
        await handler(event, stream, context(id, deadline));
      } finally {
        replies.delete(id);
      }
      if (!stream.destroyed) {
        if (!stream.writableEnded) stream.end();
        await new Promise((resolve) => (stream.writableFinished ? resolve() : stream.once('finish', resolve)));
      }
      parentPort.postMessage({ id, type: 'end' });
    } else {
      const value = await handler(event, context(id, deadline));
      parentPort.postMessage({ id, type: 'result', value: value === undefined ? null : JSON.parse(JSON.stringify(value)) });
    }
  } catch (error) {
    parentPort.postMessage({
      id,
      type: 'error',
      error: { name: error?.name ?? 'Error', message: String(error?.message ?? error), stack: error?.stack },
    });
  }
});
