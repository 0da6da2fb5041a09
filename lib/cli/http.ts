import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type RequestOptions } from 'node:http';
import type { Readable } from 'node:stream';
import { cliConfig } from './config.ts';

/**
 * The CLI's HTTP client, on node:http rather than fetch. Node's fetch is
 * undici, loaded and compiled on its first call (with its WebAssembly HTTP
 * parser): 30-45 ms of a repeat deploy's half second, all of it before the
 * first request leaves. node:http is a fraction of that and parses with the
 * native llhttp. What the CLI needs of an HTTP client is small: a request
 * with a body (bytes, a stream, or a multipart form of files), and the whole
 * answer as text.
 */

export interface HttpAnswer {
  status: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  text: string;
}

export type HttpBody = string | Buffer | Readable;

/** No answer at all (refused, reset, DNS, a connection cut mid-answer): `code` as Node names it, e.g. ECONNREFUSED. */
export class HttpNetworkError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'HttpNetworkError';
  }
}

// Kept-alive connections: a deploy's begin, uploads and finalize reuse them (the process exits, closing them, when done).
interface Transport {
  agent: HttpAgent;
  request: typeof httpRequest;
}
const transports = new Map<string, Transport>();
const transportFor = async (protocol: string): Promise<Transport> => {
  let transport = transports.get(protocol);
  if (!transport) {
    // node:https brings TLS: loaded only for an https address.
    const https = protocol === 'https:' ? await import('node:https') : null;
    transport = https
      ? { agent: new https.Agent({ keepAlive: true }), request: https.request }
      : { agent: new HttpAgent({ keepAlive: true }), request: httpRequest };
    transports.set(protocol, transport);
  }
  return transport;
};

const toNetworkError = (error: unknown) => {
  const e = error as { code?: unknown; message?: string };
  return new HttpNetworkError(typeof e.code === 'string' ? e.code : (e.message ?? 'network error'), e.message ?? String(error));
};

/** A GET whose answer is read as it comes (a live tail): resolves with the response once its head is in. */
export async function httpOpen(url: string, headers: Record<string, string>): Promise<IncomingMessage> {
  const target = new URL(url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:')
    throw new HttpNetworkError('ERR_INVALID_URL', `unsupported address ${url}`);
  // A connection of its own: a stream that stays open must not hold a kept-alive one.
  const { request: send } = await transportFor(target.protocol);
  return new Promise<IncomingMessage>((resolve, reject) => {
    const req = send(target, { method: 'GET', headers, agent: false }, resolve);
    req.on('error', (error) => reject(toNetworkError(error)));
    req.end();
  });
}

/** One request, the whole answer read; rejects with HttpNetworkError when there is no complete answer. */
export async function httpSend(
  url: string,
  init: { method: string; headers: Record<string, string>; body?: HttpBody },
): Promise<HttpAnswer> {
  const target = new URL(url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:')
    throw new HttpNetworkError('ERR_INVALID_URL', `unsupported address ${url}`);
  const headers: Record<string, string> = { ...init.headers };
  if ((typeof init.body === 'string' || Buffer.isBuffer(init.body)) && headers['content-length'] === undefined) {
    headers['content-length'] = String(Buffer.byteLength(init.body));
  }
  const { agent, request: send } = await transportFor(target.protocol);
  const options: RequestOptions = { method: init.method, headers, agent };
  return new Promise<HttpAnswer>((resolve, reject) => {
    const fail = (error: unknown) => reject(toNetworkError(error));
    const req = send(target, options, (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', fail);
      res.on('close', () => {
        if (!res.complete) fail(Object.assign(new Error('the connection closed before the answer was complete'), { code: 'ECONNRESET' }));
      });
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          statusText: res.statusMessage ?? '',
          headers: res.headers,
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    // A connection silent this long is given up (and the request retried): fetch's own limits, 300 s by default.
    const timeoutMs = cliConfig.httpTimeoutMs();
    req.setTimeout(timeoutMs, () => req.destroy(Object.assign(new Error(`no answer in ${timeoutMs} ms`), { code: 'ETIMEDOUT' })));
    const body = init.body;
    req.on('error', (error) => {
      if (body && typeof body !== 'string' && !Buffer.isBuffer(body)) body.destroy();
      fail(error);
    });
    if (body === undefined) req.end();
    else if (typeof body === 'string' || Buffer.isBuffer(body)) req.end(body);
    else {
      body.on('error', (error) => {
        req.destroy(error);
        fail(error);
      });
      body.pipe(req);
    }
  });
}

export interface FormFile {
  /** The part's name and filename. */
  name: string;
  /** Where the bytes are read from, when the form is built. */
  absolute: string;
}

/**
 * A multipart/form-data body of files (RFC 7578), read from the disk when
 * called: one Buffer with its length known, since the batch it carries is
 * bounded (lib/plans.ts MAX_BATCH_BYTES).
 */
export async function multipartForm(files: FormFile[]): Promise<{ body: Buffer; contentType: string }> {
  const boundary = `----slipway${randomBytes(16).toString('hex')}`;
  const contents = await Promise.all(files.map((file) => readFile(file.absolute)));
  const parts: Buffer[] = [];
  files.forEach((file, i) => {
    // Part names are content hashes (hex); quotes and line breaks are escaped as RFC 7578 4.2 and the HTML form encoder do.
    const name = file.name.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      ),
      contents[i]!,
      Buffer.from('\r\n'),
    );
  });
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}
