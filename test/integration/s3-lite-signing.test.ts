import { AwsClient } from 'aws4fetch';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { copyObject, deleteKeys, deleteObject, getObject, headObject, listKeysPage, presignPut, putObject } from '../../lib/aws/s3-lite.ts';
import { sendMessage } from '../../lib/aws/sqs-lite.ts';
import { startMoto, type MotoServer } from '../../lib/local/moto.ts';

/**
 * The upload endpoints' S3 calls are signed by aws4fetch, not the SDK. The
 * shared moto of the other tests checks no signature, so this file starts its
 * own with authentication on (after the first four actions, which set up an
 * IAM user with a key and the bucket) and proves that moto, recomputing each
 * signature with botocore, accepts ours and refuses a wrong secret.
 *
 * Keys here have the platform's shapes (prefixes, UUIDs, hex hashes). moto's
 * check itself disagrees with the AWS SDK's signature for keys with `+`, `%`
 * or non-ASCII characters, so those are not asserted against it; the second
 * part checks them on the shared moto.
 */
let moto: MotoServer;
let user: { id: string; secret: string };
const BUCKET = 'signing-test';
const QUEUE = 'signing-test-queue';
let queueUrl: string;

/** One call in SQS's JSON protocol, signed by `client`. */
async function sqsCall(client: AwsClient, action: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const res = await client.fetch(`${moto.endpoint}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': `AmazonSQS.${action}` },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(text);
  return JSON.parse(text);
}
const saved = { ...process.env };

beforeAll(async () => {
  moto = await startMoto({ env: { INITIAL_NO_AUTH_ACTION_COUNT: '5' } });
  const setup = (service: string) =>
    new AwsClient({ accessKeyId: 'test', secretAccessKey: 'test', service, region: 'us-east-1', retries: 0 });
  const iam = async (params: Record<string, string>) => {
    const res = await setup('iam').fetch(`${moto.endpoint}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...params, Version: '2010-05-08' }).toString(),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(text);
    return text;
  };
  await iam({ Action: 'CreateUser', UserName: 'uploader' });
  const policy = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:*', 'sqs:*'], Resource: '*' }] };
  await iam({ Action: 'PutUserPolicy', UserName: 'uploader', PolicyName: 's3', PolicyDocument: JSON.stringify(policy) });
  const key = await iam({ Action: 'CreateAccessKey', UserName: 'uploader' });
  user = { id: /<AccessKeyId>([^<]+)</.exec(key)![1]!, secret: /<SecretAccessKey>([^<]+)</.exec(key)![1]! };
  expect((await setup('s3').fetch(`${moto.endpoint}/${BUCKET}`, { method: 'PUT' })).status).toBe(200);
  const created = await sqsCall(setup('sqs'), 'CreateQueue', { QueueName: QUEUE });
  queueUrl = created.QueueUrl as string;
  process.env.AWS_ENDPOINT_URL = moto.endpoint;
  process.env.AWS_ACCESS_KEY_ID = user.id;
  process.env.AWS_SECRET_ACCESS_KEY = user.secret;
  delete process.env.AWS_SESSION_TOKEN;
});

afterAll(async () => {
  process.env = saved;
  await moto?.stop();
});

describe('S3 calls of the upload endpoints, signed by aws4fetch', () => {
  const key = 'staging/0b7e3a52-8d1c-4f0e-9a57-3f2c1d9e8b10/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08';

  it('put, get, head, copy and delete are accepted by a server that checks the signature', async () => {
    await putObject({ bucket: BUCKET, key, body: 'hello', contentType: 'text/plain' });
    expect(await (await getObject(BUCKET, key)).transformToString()).toBe('hello');
    await headObject(BUCKET, key);
    await copyObject({ bucket: BUCKET, key: 'blobs/9f86d081', sourceBucket: BUCKET, sourceKey: key, contentType: 'text/html' });
    expect(await (await getObject(BUCKET, 'blobs/9f86d081')).transformToString()).toBe('hello');
    await deleteObject(BUCKET, 'blobs/9f86d081');
    await expect(headObject(BUCKET, 'blobs/9f86d081')).rejects.toMatchObject({ $metadata: { httpStatusCode: 404 } });
  });

  it('list (a page at a time) and a multi-object delete are accepted too', async () => {
    // A prefix without `/`: moto's check fails a prefix holding one even for the AWS SDK's own request.
    const prefix = '7c0d2b3e-5a41-4c8e-9b6f-1e2d3c4b5a69.';
    const names = Array.from({ length: 5 }, (_, i) => `${prefix}${i}`);
    await Promise.all(names.map((name) => putObject({ bucket: BUCKET, key: name, body: name })));
    const first = await listKeysPage(BUCKET, prefix, undefined, 3);
    expect(first.keys).toHaveLength(3);
    expect(first.next).toBeTruthy();
    const second = await listKeysPage(BUCKET, prefix, first.next, 3);
    expect(second.next).toBeUndefined();
    expect([...first.keys, ...second.keys].sort()).toEqual(names);
    await deleteKeys(BUCKET, names);
    expect((await listKeysPage(BUCKET, prefix)).keys).toEqual([]);
  });

  it('a wrong secret is refused: 403 SignatureDoesNotMatch, as the SDK would report it', async () => {
    process.env.AWS_SECRET_ACCESS_KEY = 'not-the-secret';
    try {
      await expect(getObject(BUCKET, key)).rejects.toMatchObject({ name: 'SignatureDoesNotMatch', $metadata: { httpStatusCode: 403 } });
    } finally {
      process.env.AWS_SECRET_ACCESS_KEY = user.secret;
    }
  });

  // moto answers 500 to any presigned request once its authentication is on (it reads only the Authorization
  // header), so here the presign's shape is checked; uploads-large.test.ts sends the bytes through it.
  it('a presigned PUT signs its length and SHA-256 as headers and expires when asked', async () => {
    const url = new URL(
      await presignPut({
        bucket: BUCKET,
        key: 'staging/presigned',
        contentLength: 15,
        checksumSha256: 'n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg=',
        expiresIn: 600,
      }),
    );
    expect(url.pathname).toBe(`/${BUCKET}/staging/presigned`);
    expect(url.searchParams.get('X-Amz-Algorithm')).toBe('AWS4-HMAC-SHA256');
    expect(url.searchParams.get('X-Amz-SignedHeaders')).toBe('content-length;host;x-amz-checksum-sha256');
    expect(url.searchParams.get('X-Amz-Expires')).toBe('600');
    expect(url.searchParams.get('X-Amz-Credential')).toMatch(new RegExp(`^${user.id}/\\d{8}/us-east-1/s3/aws4_request$`));
    expect(url.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('SendMessage of the handlers that only send (lib/aws/sqs-lite.ts), signed by aws4fetch', () => {
  it('is accepted by a server that checks the signature, and the message arrives as sent', async () => {
    const body = JSON.stringify({ job_id: 'j-1', url: 'https://example.test/?q=ä' });
    const sent = await sendMessage({ queueUrl, body });
    expect(sent.messageId).toMatch(/^[0-9a-f-]{36}$/);
    const user = new AwsClient({
      accessKeyId: process.env.AWS_ACCESS_KEY_ID!,
      secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY!,
      service: 'sqs',
      region: 'us-east-1',
      retries: 0,
    });
    const received = (await sqsCall(user, 'ReceiveMessage', { QueueUrl: queueUrl, MaxNumberOfMessages: 1 })) as {
      Messages?: { MessageId: string; Body: string }[];
    };
    expect(received.Messages).toEqual([expect.objectContaining({ MessageId: sent.messageId, Body: body })]);
  });

  it('a wrong secret is refused: 403 with the error the server names', async () => {
    process.env.AWS_SECRET_ACCESS_KEY = 'not-the-secret';
    try {
      await expect(sendMessage({ queueUrl, body: 'x' })).rejects.toMatchObject({
        name: 'SignatureDoesNotMatch',
        $metadata: { httpStatusCode: 403 },
      });
    } finally {
      process.env.AWS_SECRET_ACCESS_KEY = user.secret;
    }
  });

  it('a queue that does not exist: QueueDoesNotExist, 400', async () => {
    await expect(sendMessage({ queueUrl: queueUrl.replace(QUEUE, 'no-such-queue'), body: 'x' })).rejects.toMatchObject({
      name: 'QueueDoesNotExist',
      $metadata: { httpStatusCode: 400 },
    });
  });
});

describe('keys with any character a site path may hold (the shared moto, which checks no signature)', () => {
  const keys = [
    'site/a b.html',
    'site/a&b<c>.html',
    'site/plus+sign.txt',
    'site/100%.txt',
    "site/it's(1)*.txt",
    'site/é/ü.txt',
    'site/"quoted".txt',
  ];
  const env = { ...process.env };

  beforeAll(async () => {
    process.env = { ...env, AWS_ENDPOINT_URL: inject('awsEndpoint'), AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' };
    const res = await new AwsClient({ accessKeyId: 'test', secretAccessKey: 'test', service: 's3', region: 'us-east-1' }).fetch(
      `${inject('awsEndpoint')}/s3-lite-keys`,
      { method: 'PUT' },
    );
    expect(res.status).toBe(200);
  });
  afterAll(() => {
    process.env = env;
  });

  it('put, copy, list and delete keep every key exactly', async () => {
    for (const key of keys) await putObject({ bucket: 's3-lite-keys', key, body: key });
    await copyObject({
      bucket: 's3-lite-keys',
      key: 'copies/a&b<c>.html',
      sourceBucket: 's3-lite-keys',
      sourceKey: 'site/a&b<c>.html',
      contentType: 'text/html',
    });
    expect(await (await getObject('s3-lite-keys', 'copies/a&b<c>.html')).transformToString()).toBe('site/a&b<c>.html');
    expect((await listKeysPage('s3-lite-keys', 'site/')).keys.sort()).toEqual([...keys].sort());
    await deleteKeys('s3-lite-keys', keys);
    expect((await listKeysPage('s3-lite-keys', 'site/')).keys).toEqual([]);
  });

  it('a write-once put refuses a second write of the key: PreconditionFailed, 412', async () => {
    await putObject({ bucket: 's3-lite-keys', key: 'once.json', body: '1', ifNoneMatch: '*' });
    await expect(putObject({ bucket: 's3-lite-keys', key: 'once.json', body: '2', ifNoneMatch: '*' })).rejects.toMatchObject({
      name: 'PreconditionFailed',
      $metadata: { httpStatusCode: 412 },
    });
    expect(await (await getObject('s3-lite-keys', 'once.json')).transformToString()).toBe('1');
  });
});
