import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { config } from '../config.ts';
import { AwsLiteError, backoff, CredentialsMissingError, signer } from './signer.ts';

/**
 * The few S3 object operations the upload endpoints make (get, put, head,
 * copy, delete, a presigned PUT), as `fetch` calls signed by aws4fetch
 * (lib/aws/signer.ts). The full S3 client with its schemas, checksums and endpoint rules is
 * about 165 KB of each bundle that imports it. Errors carry S3's code as
 * `name` and the status in `$metadata.httpStatusCode`, as the SDK's do;
 * network failures, 5xx, and throttling are retried three times in all with
 * jittered backoff, as the SDK's standard retry does.
 */

export { AwsLiteError as S3LiteError };

const MAX_ATTEMPTS = 3;
const RETRYABLE_CODES = new Set([
  'SlowDown',
  'Throttling',
  'ThrottlingException',
  'RequestTimeout',
  'RequestTimeTooSkewed',
  'InternalError',
]);

/** RFC 3986 encoding of each key segment; `/` kept. */
const encodeKey = (key: string) =>
  key
    .split('/')
    .map((part) => encodeURIComponent(part).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`))
    .join('/');

/** Path-style on a local endpoint (and for dotted bucket names), virtual-hosted on AWS. */
function objectUrl(bucket: string, key: string): URL {
  const endpoint = config.awsEndpoint();
  if (endpoint) return new URL(`${endpoint.replace(/\/+$/, '')}/${bucket}/${encodeKey(key)}`);
  const region = config.awsRegion();
  if (bucket.includes('.')) return new URL(`https://s3.${region}.amazonaws.com/${bucket}/${encodeKey(key)}`);
  return new URL(`https://${bucket}.s3.${region}.amazonaws.com/${encodeKey(key)}`);
}

async function send(method: string, url: URL, options: { headers?: Record<string, string>; body?: Buffer } = {}): Promise<Response> {
  const aws = signer('s3');
  for (let attempt = 1; ; attempt++) {
    let res: Response;
    try {
      // Signed again on each attempt: the signature carries its time.
      res = await fetch(await aws.sign(url.toString(), { method, headers: options.headers, body: options.body }));
    } catch (error) {
      if (error instanceof CredentialsMissingError || attempt >= MAX_ATTEMPTS) throw error;
      await backoff(attempt);
      continue;
    }
    if (res.ok) return res;
    const text = method === 'HEAD' ? '' : await res.text().catch(() => '');
    const code = /<Code>([^<]+)<\/Code>/.exec(text)?.[1] ?? (res.status === 404 ? 'NotFound' : `Http${res.status}`);
    const message = /<Message>([^<]*)<\/Message>/.exec(text)?.[1] ?? `S3 answered ${res.status}`;
    if (attempt < MAX_ATTEMPTS && (res.status >= 500 || res.status === 429 || RETRYABLE_CODES.has(code))) {
      await backoff(attempt);
      continue;
    }
    throw new AwsLiteError(code, message, res.status);
  }
}

export interface S3LiteObject {
  /** The body as a Node stream (read it once). */
  body: Readable;
  transformToString(): Promise<string>;
  transformToByteArray(): Promise<Uint8Array>;
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
    transformToByteArray: async () => {
      if (consumed) throw new Error('The body was already read.');
      consumed = true;
      return new Uint8Array(await res.arrayBuffer());
    },
  };
}

/** `ifNoneMatch: '*'` writes only when the key is free (else PreconditionFailed, 412). */
export async function putObject(input: {
  bucket: string;
  key: string;
  body: Uint8Array | string;
  contentType?: string;
  ifNoneMatch?: '*';
}): Promise<void> {
  const body =
    typeof input.body === 'string' ? Buffer.from(input.body) : Buffer.from(input.body.buffer, input.body.byteOffset, input.body.byteLength);
  const headers: Record<string, string> = {};
  if (input.contentType) headers['content-type'] = input.contentType;
  if (input.ifNoneMatch) headers['if-none-match'] = input.ifNoneMatch;
  const res = await send('PUT', objectUrl(input.bucket, input.key), { body, headers });
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
export async function copyObject(input: {
  bucket: string;
  key: string;
  sourceBucket: string;
  sourceKey: string;
  contentType: string;
}): Promise<void> {
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
  if (code) throw new AwsLiteError(code, /<Message>([^<]*)<\/Message>/.exec(text)?.[1] ?? 'The copy failed.', res.status);
}

/**
 * A presigned PUT whose length and SHA-256 are signed as headers (not hoisted
 * into the query), so S3 refuses other bytes; the payload itself is unsigned.
 */
export async function presignPut(input: {
  bucket: string;
  key: string;
  contentLength: number;
  checksumSha256: string;
  expiresIn: number;
}): Promise<string> {
  const url = objectUrl(input.bucket, input.key);
  url.searchParams.set('X-Amz-Expires', String(input.expiresIn));
  url.searchParams.set('x-id', 'PutObject');
  const signed = await signer('s3').sign(url.toString(), {
    method: 'PUT',
    headers: { 'content-length': String(input.contentLength), 'x-amz-checksum-sha256': input.checksumSha256 },
    // allHeaders: content-length is otherwise left out of the signature.
    aws: { signQuery: true, allHeaders: true },
  });
  return signed.url;
}

/** A presigned GET of one object, valid `expiresIn` seconds. */
export async function presignGet(input: { bucket: string; key: string; expiresIn: number }): Promise<string> {
  const url = objectUrl(input.bucket, input.key);
  url.searchParams.set('X-Amz-Expires', String(input.expiresIn));
  url.searchParams.set('x-id', 'GetObject');
  return (await signer('s3').sign(url.toString(), { method: 'GET', aws: { signQuery: true } })).url;
}

const XML_ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
const xmlText = (text: string) =>
  text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) =>
    name[0] === '#'
      ? String.fromCodePoint(
          Number.parseInt(name.slice(name[1] === 'x' || name[1] === 'X' ? 2 : 1), name[1] === 'x' || name[1] === 'X' ? 16 : 10),
        )
      : (XML_ENTITIES[name] ?? whole),
  );
const xmlEscape = (text: string) => text.replace(/[&<>"']/g, (c) => `&${Object.keys(XML_ENTITIES).find((k) => XML_ENTITIES[k] === c)};`);

/**
 * One page (up to 1,000, or `maxKeys`) of the keys under a prefix. Keys come URL-encoded
 * (`encoding-type=url`), so any character a key may hold survives the XML.
 */
export async function listKeysPage(
  bucket: string,
  prefix: string,
  continuationToken?: string,
  maxKeys?: number,
): Promise<{ keys: string[]; next?: string }> {
  const url = objectUrl(bucket, '');
  url.searchParams.set('list-type', '2');
  if (maxKeys) url.searchParams.set('max-keys', String(maxKeys));
  url.searchParams.set('encoding-type', 'url');
  url.searchParams.set('prefix', prefix);
  if (continuationToken) url.searchParams.set('continuation-token', continuationToken);
  const text = await (await send('GET', url)).text();
  const keys = [...text.matchAll(/<Contents>[\s\S]*?<Key>([^<]*)<\/Key>[\s\S]*?<\/Contents>/g)].map((m) =>
    decodeURIComponent(m[1]!.replace(/\+/g, ' ')),
  );
  const truncated = /<IsTruncated>true<\/IsTruncated>/.test(text);
  const next = /<NextContinuationToken>([^<]+)<\/NextContinuationToken>/.exec(text)?.[1];
  return { keys, next: truncated && next ? xmlText(next) : undefined };
}

/** Deletes up to 1,000 keys in one request; a key S3 could not delete fails the call with its code. */
export async function deleteKeys(bucket: string, keys: string[]): Promise<void> {
  if (keys.length === 0) return;
  const body = Buffer.from(
    `<Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Quiet>true</Quiet>${keys.map((k) => `<Object><Key>${xmlEscape(k)}</Key></Object>`).join('')}</Delete>`,
  );
  const url = objectUrl(bucket, '');
  url.searchParams.set('delete', '');
  // S3 wants the body's MD5 (or a checksum header) on a multi-object delete.
  const res = await send('POST', url, {
    body,
    headers: { 'content-type': 'application/xml', 'content-md5': createHash('md5').update(body).digest('base64') },
  });
  const text = await res.text();
  const failed = /<Error>[\s\S]*?<Code>([^<]+)<\/Code>[\s\S]*?<\/Error>/.exec(text);
  if (failed)
    throw new AwsLiteError(
      failed[1]!,
      `S3 could not delete every key: ${xmlText(/<Message>([^<]*)<\/Message>/.exec(failed[0])?.[1] ?? failed[1]!)}`,
      res.status,
    );
}
