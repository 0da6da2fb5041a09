import { createHash, createHmac } from 'node:crypto';
import { Readable } from 'node:stream';
import { config } from '../config.ts';

/**
 * The few S3 object operations the upload endpoints make (get, put, head,
 * copy, delete, a presigned PUT), as signed `fetch` calls: Signature V4 with
 * node:crypto and the credentials Lambda puts in the environment (as
 * infra/bundling.ts notes, the SDK's default chain finds them there first, and
 * the local platform sets them too). The full S3 client with its schemas,
 * checksums and endpoint rules is about 165 KB of each bundle that imports it;
 * this is about 4 KB. Errors carry S3's code as `name` and the status in
 * `$metadata.httpStatusCode`, as the SDK's do; network failures, 5xx, and
 * throttling are retried three times in all with jittered backoff, as the
 * SDK's standard retry does.
 */

export class S3LiteError extends Error {
  readonly $metadata: { httpStatusCode: number };
  constructor(name: string, message: string, status: number) {
    super(message);
    this.name = name;
    this.$metadata = { httpStatusCode: status };
  }
}

const MAX_ATTEMPTS = 3;
const RETRYABLE_CODES = new Set(['SlowDown', 'Throttling', 'ThrottlingException', 'RequestTimeout', 'RequestTimeTooSkewed', 'InternalError']);

const sha256Hex = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();
/** RFC 3986 encoding, as SigV4 wants it; `/` kept in keys. */
const encode = (value: string) => encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
const encodeKey = (key: string) => key.split('/').map(encode).join('/');

function credentials() {
  const accessKeyId = process.env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = process.env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) throw new S3LiteError('CredentialsProviderError', 'No AWS credentials in the environment.', 0);
  return { accessKeyId, secretAccessKey, sessionToken: process.env.AWS_SESSION_TOKEN || undefined };
}

/** Path-style on a local endpoint (and for dotted bucket names), virtual-hosted on AWS. */
function objectUrl(bucket: string, key: string): URL {
  const endpoint = config.awsEndpoint();
  if (endpoint) return new URL(`${endpoint.replace(/\/+$/, '')}/${bucket}/${encodeKey(key)}`);
  const region = config.awsRegion();
  if (bucket.includes('.')) return new URL(`https://s3.${region}.amazonaws.com/${bucket}/${encodeKey(key)}`);
  return new URL(`https://${bucket}.s3.${region}.amazonaws.com/${encodeKey(key)}`);
}

function amzDate(now = new Date()) {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  return { stamp, day: stamp.slice(0, 8) };
}

function canonicalQuery(params: URLSearchParams): string {
  return [...params.entries()]
    .map(([k, v]) => [encode(k), encode(v)] as const)
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
}

function signature(secret: string, day: string, region: string, stringToSign: string): string {
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, day), region), 's3'), 'aws4_request');
  return createHmac('sha256', key).update(stringToSign).digest('hex');
}

/** Signs a request in place (Authorization header). `headers` names are lower-case. */
function signHeaders(method: string, url: URL, headers: Record<string, string>, payloadHash: string): void {
  const { accessKeyId, secretAccessKey, sessionToken } = credentials();
  const region = config.awsRegion();
  const { stamp, day } = amzDate();
  headers.host = url.host;
  headers['x-amz-date'] = stamp;
  headers['x-amz-content-sha256'] = payloadHash;
  if (sessionToken) headers['x-amz-security-token'] = sessionToken;
  const names = Object.keys(headers).sort();
  const canonical = [
    method,
    url.pathname,
    canonicalQuery(url.searchParams),
    names.map((n) => `${n}:${headers[n]!.trim().replace(/\s+/g, ' ')}\n`).join(''),
    names.join(';'),
    payloadHash,
  ].join('\n');
  const scope = `${day}/${region}/s3/aws4_request`;
  const toSign = `AWS4-HMAC-SHA256\n${stamp}\n${scope}\n${sha256Hex(canonical)}`;
  headers.authorization = `AWS4-HMAC-SHA256 Credential=${accessKeyId}/${scope}, SignedHeaders=${names.join(';')}, Signature=${signature(secretAccessKey, day, region, toSign)}`;
  delete headers.host; // fetch sets it
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function send(method: string, url: URL, options: { headers?: Record<string, string>; body?: Buffer } = {}): Promise<Response> {
  const body = options.body;
  for (let attempt = 1; ; attempt++) {
    const headers: Record<string, string> = { ...options.headers };
    if (body) headers['content-length'] = String(body.length);
    signHeaders(method, url, headers, sha256Hex(body ?? ''));
    let res: Response;
    try {
      res = await fetch(url, { method, headers, body });
    } catch (error) {
      if (attempt >= MAX_ATTEMPTS) throw error;
      await sleep(Math.random() * 100 * 2 ** attempt);
      continue;
    }
    if (res.ok) return res;
    const text = method === 'HEAD' ? '' : await res.text().catch(() => '');
    const code = /<Code>([^<]+)<\/Code>/.exec(text)?.[1] ?? (res.status === 404 ? 'NotFound' : `Http${res.status}`);
    const message = /<Message>([^<]*)<\/Message>/.exec(text)?.[1] ?? `S3 answered ${res.status}`;
    if (attempt < MAX_ATTEMPTS && (res.status >= 500 || res.status === 429 || RETRYABLE_CODES.has(code))) {
      await sleep(Math.random() * 100 * 2 ** attempt);
      continue;
    }
    throw new S3LiteError(code, message, res.status);
  }
}

export interface S3LiteObject {
  /** The body as a Node stream (read it once). */
  body: Readable;
  transformToString(): Promise<string>;
}

export async function getObject(bucket: string, key: string): Promise<S3LiteObject> {
  const res = await send('GET', objectUrl(bucket, key));
  let consumed = false;
  return {
    get body() {
      consumed = true;
      return Readable.fromWeb(res.body as import('node:stream/web').ReadableStream);
    },
    transformToString: async () => {
      if (consumed) throw new Error('The body was already read.');
      consumed = true;
      return res.text();
    },
  };
}

export async function putObject(input: { bucket: string; key: string; body: Buffer | string; contentType?: string }): Promise<void> {
  const body = typeof input.body === 'string' ? Buffer.from(input.body) : input.body;
  const res = await send('PUT', objectUrl(input.bucket, input.key), {
    body,
    headers: input.contentType ? { 'content-type': input.contentType } : {},
  });
  await res.body?.cancel();
}

export async function deleteObject(bucket: string, key: string): Promise<void> {
  const res = await send('DELETE', objectUrl(bucket, key));
  await res.body?.cancel();
}

/** Resolves when the object exists; rejects (NotFound, ...) otherwise. */
export async function headObject(bucket: string, key: string): Promise<void> {
  const res = await send('HEAD', objectUrl(bucket, key));
  await res.body?.cancel();
}

/** Server-side copy with a new content type (metadata replaced). */
export async function copyObject(input: { bucket: string; key: string; sourceBucket: string; sourceKey: string; contentType: string }): Promise<void> {
  const res = await send('PUT', objectUrl(input.bucket, input.key), {
    headers: {
      'x-amz-copy-source': `/${input.sourceBucket}/${encodeKey(input.sourceKey)}`,
      'x-amz-metadata-directive': 'REPLACE',
      'content-type': input.contentType,
    },
  });
  const text = await res.text();
  // A copy can fail after its 200 has started: the error is then in the body.
  const code = /<Error>[\s\S]*?<Code>([^<]+)<\/Code>/.exec(text)?.[1];
  if (code) throw new S3LiteError(code, /<Message>([^<]*)<\/Message>/.exec(text)?.[1] ?? 'The copy failed.', res.status);
}

/**
 * A presigned PUT whose length and SHA-256 are signed as headers (not hoisted
 * into the query), so S3 refuses other bytes; the payload itself is unsigned.
 */
export function presignPut(input: { bucket: string; key: string; contentLength: number; checksumSha256: string; expiresIn: number }): string {
  const { accessKeyId, secretAccessKey, sessionToken } = credentials();
  const region = config.awsRegion();
  const url = objectUrl(input.bucket, input.key);
  const { stamp, day } = amzDate();
  const scope = `${day}/${region}/s3/aws4_request`;
  const headers: Record<string, string> = {
    'content-length': String(input.contentLength),
    host: url.host,
    'x-amz-checksum-sha256': input.checksumSha256,
  };
  const names = Object.keys(headers).sort();
  url.searchParams.set('X-Amz-Algorithm', 'AWS4-HMAC-SHA256');
  url.searchParams.set('X-Amz-Content-Sha256', 'UNSIGNED-PAYLOAD');
  url.searchParams.set('X-Amz-Credential', `${accessKeyId}/${scope}`);
  url.searchParams.set('X-Amz-Date', stamp);
  url.searchParams.set('X-Amz-Expires', String(input.expiresIn));
  if (sessionToken) url.searchParams.set('X-Amz-Security-Token', sessionToken);
  url.searchParams.set('X-Amz-SignedHeaders', names.join(';'));
  url.searchParams.set('x-id', 'PutObject');
  const canonical = [
    'PUT',
    url.pathname,
    canonicalQuery(url.searchParams),
    names.map((n) => `${n}:${headers[n]}\n`).join(''),
    names.join(';'),
    'UNSIGNED-PAYLOAD',
  ].join('\n');
  const toSign = `AWS4-HMAC-SHA256\n${stamp}\n${scope}\n${sha256Hex(canonical)}`;
  url.searchParams.set('X-Amz-Signature', signature(secretAccessKey, day, region, toSign));
  return url.toString();
}
