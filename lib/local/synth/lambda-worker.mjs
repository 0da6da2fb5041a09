// One Lambda execution environment of the synthesized mode: a worker thread
// with the function's own environment (its template variables and its own
// credentials), which imports the asset's handler once and then answers one
// invocation at a time, as a Lambda environment does. Plain JavaScript: it
// loads the bundle `cdk deploy` uploads, never the TypeScript sources.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Writable } from 'node:stream';
import { parentPort, workerData } from 'node:worker_threads';

const { assetDir, handler: handlerSetting, functionName, memoryMb } = workerData;

if ((process.env.NODE_OPTIONS ?? '').includes('--enable-source-maps')) process.setSourceMapsEnabled(true);

/** The runtime's streaming API (`awslambda`): a streamed reply posts its head, then its chunks. */
const STREAMING = Symbol('streaming');
class ReplyStream extends Writable {
  constructor(id) {
    super();
    this.id = id;
  }
  _write(chunk, _encoding, done) {
    parentPort.postMessage({ id: this.id, type: 'chunk', data: Buffer.from(chunk) });
    done();
  }
}
globalThis.awslambda = {
  streamifyResponse(fn) {
    fn[STREAMING] = true;
    return fn;
  },
  HttpResponseStream: {
    from(stream, metadata) {
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

parentPort.on('message', async ({ id, event, deadline, overlay }) => {
  for (const [name, value] of Object.entries(overlay ?? {})) {
    if (value === null) delete process.env[name];
    else process.env[name] = value;
  }
  try {
    if (handler[STREAMING]) {
      const stream = new ReplyStream(id);
      await handler(event, stream, context(id, deadline));
      if (!stream.writableEnded) stream.end();
      await new Promise((resolve) => (stream.writableFinished ? resolve() : stream.once('finish', resolve)));
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
