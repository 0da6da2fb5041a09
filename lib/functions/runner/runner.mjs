// The one runner program every functions host uses (local sandbox, cloud
// adapter). Plain JavaScript, Node built-ins only.
//
// It loads one ES module bundle, resolves the handler in the spec's order,
// builds the Web Request the handler receives, calls it with `context`, and
// turns what it returns into a reply. The core (the exported functions below)
// has no socket server in it, so the cloud adapter can load it too. The
// framing and header names are protocol.mjs, beside it.
//
// Modes (argv[2]):
//   serve  An HTTPS-door instance: a server on a path-based unix socket
//          (--socket PATH) speaking the light framing of protocol.mjs (FRAME), not
//          HTTP: the door parses HTTP once, the runner never does. Many
//          requests at once, as streams of one connection. Fd 3 is the control
//          channel, JSON lines both ways (stdout and stderr are the user's
//          console): the runner says {"type":"booted"} once it listens and has
//          loaded node:http and undici, then a pre-started blank instance is
//          told {"type":"load","bundle":PATH,"url":URL} and answers
//          {"type":"loaded"} or {"type":"load_failed","message":...}.
//          --bundle and --url load at start instead. A blank instance may be
//          told {"type":"once","bundle":PATH,"url":URL,"request":PATH} instead:
//          it runs that one queued invocation as `once` mode does, answers
//          {"type":"result",...the result} and exits (the local host starts
//          these processes ahead of need, so a queued call does not wait for
//          node to boot, yet still has a process of its own).
//   once   One request (queued door): reads {method, query, headers, body}
//          (body base64) as JSON from --request FILE or --request-fd N, writes
//          {status, headers, body, outcome} (body base64) as one JSON line to
//          fd 3 (or --result-fd N) and exits.
//
// Egress: when SLIPWAY_EGRESS_SOCKET names the platform's egress proxy socket,
// a tiny TCP bridge from 127.0.0.1:SLIPWAY_EGRESS_PORT to it starts before any
// user code; the host runs node with NODE_USE_ENV_PROXY=1 and HTTPS_PROXY
// pointing at the bridge, and https.Agents made by user code get `proxyEnv`.

import { Buffer } from 'node:buffer';
import { readFileSync, writeSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import {
  creditPayload,
  discardBody,
  FRAME,
  frameParser,
  frameWriter,
  HOP_BY_HOP,
  INTERNAL_HEADER_PREFIX,
  MAX_FRAME_BODY,
  OUTCOME_HEADER,
  receiveBody,
  SendWindow,
  sendBody,
} from './protocol.mjs';

/** The outcome header, for the hosts that read the core's replies (tests, the Lambda entry). */
export { OUTCOME_HEADER };

/**
 * The handler of a loaded module, in the spec's order: a default export
 * function; a default export object with a `fetch` method (Hono and the like);
 * a named export `fetch`; a CommonJS `module.exports = function` (the ESM
 * default of an esbuild bundle of a CJS entry, or the `module.exports` name
 * Node gives a CJS module). Returns null when none matches.
 */
export function resolveHandler(mod) {
  if (!mod || (typeof mod !== 'object' && typeof mod !== 'function')) return null;
  const def = mod.default;
  if (typeof def === 'function') return { shape: 'default_function', call: (request, context) => def(request, context) };
  if (def && typeof def === 'object' && typeof def.fetch === 'function') {
    return { shape: 'default_object_fetch', call: (request, context) => def.fetch(request, context) };
  }
  if (typeof mod.fetch === 'function') return { shape: 'named_fetch', call: (request, context) => mod.fetch(request, context) };
  // CommonJS forms: `module.exports` as Node names it, or a transpiled `exports.default` one level down.
  const cjs = mod['module.exports'] ?? (def && typeof def === 'object' ? def.default : undefined);
  if (typeof cjs === 'function') return { shape: 'commonjs_function', call: (request, context) => cjs(request, context) };
  if (cjs && typeof cjs === 'object' && typeof cjs.fetch === 'function') {
    return { shape: 'commonjs_object_fetch', call: (request, context) => cjs.fetch(request, context) };
  }
  return null;
}

/** Imports the bundle and resolves its handler; throws when it fails to load or exports no handler. */
export async function loadHandler(bundlePath) {
  const mod = await import(pathToFileURL(bundlePath).href);
  const handler = resolveHandler(mod);
  if (!handler)
    throw new Error('the bundle exports no handler (default function, default object with fetch, named fetch, or module.exports function)');
  return handler;
}

/**
 * The Web Request the handler receives: `url` is the function's public URL
 * plus the caller's query string, header names lower-cased, the body streamed
 * (duplex half) for methods other than GET and HEAD.
 *
 * @param {{ method: string, publicUrl: string, query?: string, headers: Iterable<[string, string]>, body?: Readable | ReadableStream | Uint8Array | null, signal?: AbortSignal }} input
 */
export function buildRequest({ method, publicUrl, query = '', headers, body = null, signal }) {
  const url = requestUrl(publicUrl, query.replace(/^\?/, ''));
  const out = new Headers();
  for (const [name, value] of headers) {
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || lower.startsWith(INTERNAL_HEADER_PREFIX)) continue;
    out.append(lower, value);
  }
  out.set('host', url.host);
  const upper = method.toUpperCase();
  const init = { method: upper, headers: out, signal };
  if (upper !== 'GET' && upper !== 'HEAD' && body != null) {
    init.body = body instanceof Readable ? Readable.toWeb(body) : body;
    init.duplex = 'half';
  }
  return new Request(url.href, init);
}

/** The function's URL without a query, parsed once per URL: a warm instance gets the same one every request. */
let publicBase = { publicUrl: '', href: '', host: '', plain: false };

/** `href` and `host` of the public URL with the caller's query. */
function requestUrl(publicUrl, query) {
  if (publicBase.publicUrl !== publicUrl) {
    const url = new URL(publicUrl);
    url.search = '';
    publicBase = { publicUrl, href: url.href, host: url.host, plain: url.hash === '' };
  }
  // A query with '#' in it is encoded by the URL setter (as %23), never read as a fragment.
  if (!query || !publicBase.plain || query.includes('#')) {
    if (!query) return publicBase;
    const url = new URL(publicUrl);
    url.search = `?${query}`;
    return url;
  }
  return { href: `${publicBase.href}?${query}`, host: publicBase.host };
}

/**
 * The handler's `context`: `env` is empty and frozen (nothing the user set
 * reaches a function); `waitUntil(promise)` keeps the promise running after
 * the reply, and a rejection is logged to stderr, never thrown.
 */
const EMPTY_ENV = Object.freeze({});

export function createContext({ log = defaultLog } = {}) {
  const pending = new Set();
  const context = Object.freeze({
    env: EMPTY_ENV,
    waitUntil(promise) {
      const tracked = Promise.resolve(promise).then(
        () => undefined,
        (error) => log(`waitUntil promise rejected: ${describeError(error)}`),
      );
      pending.add(tracked);
      tracked.finally(() => pending.delete(tracked));
    },
  });
  return { context, pending };
}

/**
 * Calls the handler. A Response (or a promise of one) is `response`; a throw
 * or rejection is `handler_error` and anything else `invalid_response`, each
 * logged to stderr and answered later with a bare 500.
 */
export async function invokeHandler(handler, request, context, { log = defaultLog } = {}) {
  let result;
  try {
    result = await handler.call(request, context);
  } catch (error) {
    log(`handler error: ${describeError(error)}`);
    return { outcome: 'handler_error', response: null };
  }
  if (!(result instanceof Response)) {
    log(`handler returned ${describeValue(result)}, not a Response`);
    return { outcome: 'invalid_response', response: null };
  }
  return { outcome: 'response', response: result };
}

/**
 * Status and header pairs of a reply, the outcome header included. Several
 * `set-cookie` stay several pairs; a failed call is a bare 500.
 */
export function replyHead({ outcome, response }) {
  if (outcome !== 'response' || !response)
    return {
      status: 500,
      headers: [
        [OUTCOME_HEADER, outcome],
        ['content-length', '0'],
      ],
    };
  const headers = [];
  response.headers.forEach((value, name) => {
    if (name === 'set-cookie' || HOP_BY_HOP.has(name) || name.startsWith(INTERNAL_HEADER_PREFIX)) return;
    headers.push([name, value]);
  });
  for (const cookie of response.headers.getSetCookie()) headers.push(['set-cookie', cookie]);
  headers.push([OUTCOME_HEADER, 'response']);
  return { status: response.status, headers };
}

/** Whether a reply to this method and status carries no body. */
const bodiless = (method, status) => method === 'HEAD' || status === 204 || status === 304 || (status >= 100 && status < 200);

/** Status, headers and the whole body base64 (the queued door's result). */
export async function collectReply(result, { method = 'GET' } = {}) {
  const { status, headers } = replyHead(result);
  let body = Buffer.alloc(0);
  if (result.outcome === 'response' && result.response.body && !bodiless(method, status)) {
    body = Buffer.from(await result.response.arrayBuffer());
  }
  return {
    status,
    headers: headers.filter(([name]) => name !== OUTCOME_HEADER && name !== 'content-length'),
    body: body.toString('base64'),
    outcome: result.outcome,
  };
}

function describeError(error) {
  if (error instanceof Error) return error.stack ?? `${error.name}: ${error.message}`;
  return describeValue(error);
}

function describeValue(value) {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'object') return `an object (${value.constructor?.name ?? 'no prototype'})`;
  return `a ${typeof value}`;
}

function defaultLog(line) {
  process.stderr.write(`[runner] ${line}\n`);
}

// ---------------------------------------------------------------------------
// Process set-up: the egress bridge, proxied https agents, warming undici.

/** Starts the loopback TCP bridge to the egress proxy's unix socket. */
export function startEgressBridge(socketPath, port) {
  const server = net.createServer((client) => {
    const upstream = net.connect(socketPath);
    client.pipe(upstream).pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close);
    upstream.on('error', close);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.unref();
      resolve(server);
    });
  });
}

/** https.Agents made by user code (the AWS SDK makes its own) use the proxy too. */
function proxyUserAgents() {
  const Base = https.Agent;
  class ProxiedAgent extends Base {
    constructor(options = {}) {
      super(options && options.proxyEnv === undefined ? { ...options, proxyEnv: process.env } : options);
    }
  }
  https.Agent = ProxiedAgent;
  syncBuiltinESMExports();
}

/** Loads undici (Request, Response, fetch) and node:http before any bundle, so a pre-started instance answers fast. */
async function warm() {
  const request = new Request('http://warm.invalid/', { method: 'POST', body: 'x', headers: { a: 'b' }, duplex: 'half' });
  await request.text();
  const response = new Response(new ReadableStream({ start: (c) => (c.enqueue(new Uint8Array([1])), c.close()) }), {
    headers: { 'set-cookie': 'a=b' },
  });
  response.headers.getSetCookie();
  await response.arrayBuffer();
  void fetch;
  void http.STATUS_CODES;
}

async function setUpProcess() {
  const socket = process.env.SLIPWAY_EGRESS_SOCKET;
  if (socket) {
    await startEgressBridge(socket, Number(process.env.SLIPWAY_EGRESS_PORT) || 3128);
    proxyUserAgents();
  }
  await warm();
}

function parseArgs(argv) {
  const options = {};
  for (let i = 0; i < argv.length; i++) {
    const match = /^--([a-z-]+)(?:=(.*))?$/.exec(argv[i]);
    if (!match) continue;
    options[match[1]] = match[2] ?? argv[++i];
  }
  return options;
}

// ---------------------------------------------------------------------------
// serve: the HTTPS door's instance.

/** Writes a reply as frames: the head at once, then the body chunk by chunk as the window allows. True when it ended whole. */
async function writeFramedReply(write, id, window, result, entry, { method = 'GET', log = defaultLog } = {}) {
  const { status, headers } = replyHead(result);
  const outcome = result.outcome;
  write(FRAME.HEAD, id, Buffer.from(JSON.stringify({ s: status, h: headers.filter(([name]) => name !== OUTCOME_HEADER), o: outcome })));
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

async function serve(options) {
  await setUpProcess();
  let loaded = null; // { handler, url }
  const control = openControl();

  const server = net.createServer((socket) => {
    const write = frameWriter(socket);
    /** The streams in progress on this connection, by id. */
    const streams = new Map();
    socket.on('error', () => {});
    socket.on('close', () => {
      for (const entry of [...streams.values()]) entry.abort(new Error('the door closed the connection'));
    });

    const start = (id, payload) => {
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
      const { handler, url } = loaded;
      let request;
      try {
        request = buildRequest({
          method,
          publicUrl: url,
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
      invokeHandler(handler, request, context)
        .then((result) => (entry.over ? false : writeFramedReply(write, id, window, result, entry, { method })))
        .then(finish, (error) => {
          defaultLog(`reply failed: ${describeError(error)}`);
          finish(false);
        });
    };

    socket.on(
      'data',
      frameParser((type, id, payload) => {
        const entry = streams.get(id);
        if (type === FRAME.HEAD) {
          if (!entry) start(id, payload);
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
  });

  const load = async (bundle, url) => {
    try {
      const handler = await loadHandler(bundle);
      new URL(url);
      loaded = { handler, url };
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

/** The JSON-lines control channel on fd 3, when the host opened one. */
function openControl(fd = 3) {
  let socket;
  try {
    socket = new net.Socket({ fd, readable: true, writable: true });
  } catch {
    return null;
  }
  let buffered = '';
  const listeners = [];
  socket.setEncoding('utf8');
  socket.on('data', (text) => {
    buffered += text;
    let newline;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      if (!line.trim()) continue;
      let message;
      try {
        message = JSON.parse(line);
      } catch {
        continue;
      }
      for (const listener of listeners) listener(message);
    }
  });
  // The host went away: so does the instance.
  socket.on('end', () => process.exit(0));
  socket.on('error', () => process.exit(0));
  return {
    send: (message) => socket.write(`${JSON.stringify(message)}\n`),
    // The line is written out before the process goes (a socket's writes are asynchronous).
    sendAndExit: (message) => socket.end(`${JSON.stringify(message)}\n`, () => process.exit(0)),
    onMessage: (listener) => listeners.push(listener),
  };
}

// ---------------------------------------------------------------------------
// once: one queued invocation.

/** One queued invocation: {method, query, headers, body (base64)} in, {status, headers, body, outcome} out. */
async function runOnce({ bundle, url, input }) {
  try {
    const handler = await loadHandler(bundle);
    const method = String(input.method ?? 'POST').toUpperCase();
    const body = input.body ? Buffer.from(input.body, 'base64') : null;
    const request = buildRequest({ method, publicUrl: url, query: input.query ?? '', headers: input.headers ?? [], body });
    // On a queued call waitUntil does nothing: the process exits when the handler returns.
    const context = Object.freeze({ env: Object.freeze({}), waitUntil() {} });
    return await collectReply(await invokeHandler(handler, request, context), { method });
  } catch (error) {
    defaultLog(`invocation failed: ${describeError(error)}`);
    return { status: 500, headers: [], body: '', outcome: 'start_failed' };
  }
}

async function once(options) {
  await setUpProcess();
  const input = JSON.parse(readFileSync(options['request-fd'] !== undefined ? Number(options['request-fd']) : options.request, 'utf8'));
  const resultFd = options['result-fd'] !== undefined ? Number(options['result-fd']) : 3;
  const result = await runOnce({ bundle: options.bundle, url: options.url, input });
  writeSync(resultFd, `${JSON.stringify(result)}\n`);
  process.exit(0);
}

const isMain = process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isMain) {
  const mode = process.argv[2];
  const options = parseArgs(process.argv.slice(3));
  const run = mode === 'serve' ? serve : mode === 'once' ? once : null;
  if (!run) {
    process.stderr.write('usage: runner.mjs serve --socket PATH [--bundle FILE --url URL] | once --bundle FILE --url URL --request FILE\n');
    process.exit(2);
  }
  run(options).catch((error) => {
    defaultLog(`runner failed: ${describeError(error)}`);
    process.exit(1);
  });
}
