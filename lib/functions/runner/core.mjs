// The runner's core (runner.mjs is the program): loads a bundle, resolves its handler in the spec's order,
// builds the Web Request the handler receives, calls it with `context` and turns what it returns into a reply.
// No socket server in it, so the cloud adapter's Lambda entry drives it too (through runner.mjs, which
// re-exports it). Plain JavaScript, Node built-ins only.

import { Buffer } from 'node:buffer';
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { HOP_BY_HOP, INTERNAL_HEADER_PREFIX, OUTCOME_HEADER } from './protocol.mjs';

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
    return { outcome: 'handler_error', response: null, error: errorReport(error) };
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
export const bodiless = (method, status) => method === 'HEAD' || status === 204 || status === 304 || (status >= 100 && status < 200);

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

/**
 * What a live tail shows of a thrown value (docs/functions.md, "Live tail"): its message and stack, cut to 8 KiB
 * each. It travels with the reply's head to the door, never to the caller.
 */
export function errorReport(error) {
  const cut = (text) => (text.length > 8192 ? text.slice(0, 8192) : text);
  if (error instanceof Error) return { message: cut(String(error.message)), stack: cut(String(error.stack ?? '')) };
  return { message: cut(describeValue(error)), stack: '' };
}

export function describeError(error) {
  if (error instanceof Error) return error.stack ?? `${error.name}: ${error.message}`;
  return describeValue(error);
}

function describeValue(value) {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'object') return `an object (${value.constructor?.name ?? 'no prototype'})`;
  return `a ${typeof value}`;
}

export function defaultLog(line) {
  process.stderr.write(`[runner] ${line}\n`);
}

/** One queued invocation: {method, query, headers, body (base64)} in, {status, headers, body, outcome} out. */
export async function runOnce({ bundle, url, input }) {
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
