// serve: the HTTPS door's instance (runner.mjs serve). A server on a path-based unix socket speaking the
// framing of protocol.mjs; many requests at once, as streams of one connection. Plain JavaScript.

import { Buffer } from 'node:buffer';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import {
  bodiless,
  buildRequest,
  createContext,
  defaultLog,
  describeError,
  invokeHandler,
  loadHandler,
  replyHead,
  runOnce,
} from './core.mjs';
import {
  creditPayload,
  discardBody,
  FRAME,
  frameParser,
  frameWriter,
  MAX_FRAME_BODY,
  OUTCOME_HEADER,
  receiveBody,
  SendWindow,
  sendBody,
} from './protocol.mjs';
import { openControl, setUpProcess } from './setup.mjs';

/** Writes a reply as frames: the head at once, then the body chunk by chunk as the window allows. True when it ended whole. */
async function writeFramedReply(write, id, window, result, entry, { method = 'GET', log = defaultLog } = {}) {
  const { status, headers } = replyHead(result);
  const outcome = result.outcome;
  // `e`: the thrown error's message and stack, for the door's live tail (never the caller's).
  const frameHead = { s: status, h: headers.filter(([name]) => name !== OUTCOME_HEADER), o: outcome };
  if (result.error) frameHead.e = result.error;
  write(FRAME.HEAD, id, Buffer.from(JSON.stringify(frameHead)));
  const body = outcome === 'response' ? result.response.body : null;
  if (!body || bodiless(method, status)) {
    if (body) body.cancel().catch(() => {});
    write(FRAME.END, id);
    return true;
  }
  const reader = body.getReader();
  entry.reader = reader;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (entry.over) return false;
      if (done) break;
      const chunk = typeof value === 'string' ? Buffer.from(value) : value;
      // Most chunks fit the window whole: they go at once, without waiting on it.
      if (!window.closed && chunk.length <= window.available && chunk.length <= MAX_FRAME_BODY) {
        write(FRAME.BODY, id, chunk);
        window.available -= chunk.length;
      } else if (!(await sendBody(write, id, window, chunk))) return false;
    }
    write(FRAME.END, id);
    return true;
  } catch (error) {
    if (!entry.over) log(`response body failed: ${describeError(error)}`);
    reader.cancel().catch(() => {});
    return false;
  }
}

/** One stream: the request's HEAD came; the handler is called and its reply written as frames. */
function startStream(streams, write, socket, id, payload, loaded) {
  let head;
  try {
    head = JSON.parse(payload.toString());
  } catch {
    socket.destroy();
    return;
  }
  const method = String(head.m || 'GET').toUpperCase();
  const window = new SendWindow();
  // A GET or HEAD body is never read: its frames are dropped without a stream.
  const body =
    method === 'GET' || method === 'HEAD' ? discardBody() : receiveBody((bytes) => write(FRAME.CREDIT, id, creditPayload(bytes)));
  const entry = {
    body,
    window,
    reader: null,
    over: false,
    /** The door gave the stream up (or went): the reply stops, the handler runs on. */
    abort(error) {
      if (entry.over) return;
      entry.over = true;
      streams.delete(id);
      window.close();
      body.fail(error);
      entry.reader?.cancel().catch(() => {});
    },
  };
  streams.set(id, entry);
  /** The reply is over: a cut one, or a request body not read to its end, is given up with RESET. */
  const finish = (whole) => {
    if (entry.over) return;
    entry.over = true;
    streams.delete(id);
    window.close();
    if (!whole || !body.ended) write(FRAME.RESET, id);
    if (!body.ended) body.fail(new Error('the reply is over'));
  };
  if (!loaded) {
    write(FRAME.HEAD, id, Buffer.from(JSON.stringify({ s: 503, h: [], o: 'not_loaded' })));
    write(FRAME.END, id);
    return finish(true);
  }
  let request;
  try {
    request = buildRequest({
      method,
      publicUrl: loaded.url,
      query: head.q || '',
      headers: head.h || [],
      body: method === 'GET' || method === 'HEAD' ? null : body.stream,
    });
  } catch (error) {
    defaultLog(`request not built: ${describeError(error)}`);
    write(FRAME.HEAD, id, Buffer.from(JSON.stringify({ s: 500, h: [['content-length', '0']], o: 'handler_error' })));
    write(FRAME.END, id);
    return finish(true);
  }
  const { context } = createContext();
  invokeHandler(loaded.handler, request, context)
    .then((result) => (entry.over ? false : writeFramedReply(write, id, window, result, entry, { method })))
    .then(finish, (error) => {
      defaultLog(`reply failed: ${describeError(error)}`);
      finish(false);
    });
}

/** One connection from the door: its frames, stream by stream. `instance.loaded` is the bundle once loaded. */
function serveConnection(socket, instance) {
  const write = frameWriter(socket);
  /** The streams in progress on this connection, by id. */
  const streams = new Map();
  socket.on('error', () => {});
  socket.on('close', () => {
    for (const entry of [...streams.values()]) entry.abort(new Error('the door closed the connection'));
  });
  socket.on(
    'data',
    frameParser((type, id, payload) => {
      const entry = streams.get(id);
      if (type === FRAME.HEAD) {
        if (!entry) startStream(streams, write, socket, id, payload, instance.loaded);
        return;
      }
      // Frames of a stream already over are dropped.
      if (!entry) return;
      if (type === FRAME.BODY) entry.body.push(payload);
      else if (type === FRAME.END) entry.body.end();
      else if (type === FRAME.CREDIT && payload.length === 4) entry.window.grant(payload.readUInt32BE(0));
      else if (type === FRAME.RESET) entry.abort(new Error('the door gave the request up'));
    }),
  );
}

export async function serve(options) {
  await setUpProcess();
  /** { loaded: { handler, url } | null } */
  const instance = { loaded: null };
  const control = openControl();
  const server = net.createServer((socket) => serveConnection(socket, instance));

  const load = async (bundle, url) => {
    try {
      const handler = await loadHandler(bundle);
      new URL(url);
      instance.loaded = { handler, url };
      control?.send({ type: 'loaded' });
    } catch (error) {
      defaultLog(`bundle failed to load: ${describeError(error)}`);
      control?.send({ type: 'load_failed', message: error instanceof Error ? error.message : String(error) });
    }
  };

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.socket, resolve);
  });
  control?.send({ type: 'booted' });
  let taken = false;
  control?.onMessage((message) => {
    if (taken) return;
    if (message.type === 'load') {
      taken = true;
      void load(message.bundle, message.url);
    } else if (message.type === 'once') {
      taken = true;
      server.close();
      void runOnce({ bundle: message.bundle, url: message.url, input: JSON.parse(readFileSync(message.request, 'utf8')) }).then((result) =>
        control.sendAndExit({ type: 'result', ...result }),
      );
    }
  });
  if (options.bundle && options.url) await load(options.bundle, options.url);
}
