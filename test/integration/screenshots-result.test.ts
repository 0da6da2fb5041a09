import { randomBytes } from 'node:crypto';
import { DeleteMessageCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '../../lib/aws/clients.ts';
import { listKeysPage } from '../../lib/aws/s3-lite.ts';
import { sqs } from '../../lib/aws/sqs.ts';
import { config } from '../../lib/config.ts';
import { keys } from '../../lib/db/keys.ts';
import { createScreenshotJob, type CaptureMessage } from '../../lib/screenshots/jobs.ts';
import { expectEnvelopeError as expectError } from '../support/envelope.ts';
import { until } from '../support/wait.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { deploy, uniqueName, uniqueSite } from '../support/uploads.ts';

/**
 * Spec endpoint 21 (PUT /api/v1/public/screenshots/jobs/{job_id}): the job's
 * single-use token, the PNG checks with real files, the failure report, and
 * the project's latest screenshot read by its team. The capture worker is off
 * here (screenshots-capture.test.ts runs the real browser); jobs come from
 * publishes and their tokens from the queue, as the worker gets them.
 */
let platform: TestPlatform;
let m: Awaited<ReturnType<typeof makeTeamWithRoles>>;
let projectId: string;
let deploymentId: string;

function png(width: number, height: number): Buffer {
  const image = new PNG({ width, height });
  for (let i = 0; i < image.data.length; i += 4) image.data.set([i % 251, 90, 200, 255], i);
  return PNG.sync.write(image);
}

/** Creates a job for the project and takes its message off the queue, as a capture worker would. */
async function newJob(): Promise<CaptureMessage> {
  const jobId = await createScreenshotJob({ projectId, teamId: m.team.id, deploymentId, url: 'http://example.localhost/' });
  for (let attempt = 0; attempt < 50; attempt++) {
    const out = await sqs().send(
      new ReceiveMessageCommand({ QueueUrl: config.queueUrl('screenshots'), MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
    );
    for (const message of out.Messages ?? []) {
      await sqs().send(new DeleteMessageCommand({ QueueUrl: config.queueUrl('screenshots'), ReceiptHandle: message.ReceiptHandle! }));
      const body = JSON.parse(message.Body!) as CaptureMessage;
      if (body.job_id === jobId) return body;
    }
  }
  throw new Error(`no queue message for job ${jobId}`);
}

const put = (
  job: CaptureMessage,
  body: Buffer | string,
  type: string,
  extra: Record<string, string> = {},
  token: string | null = job.token,
) =>
  platform.api('PUT', job.upload_path, {
    rawBody: body,
    headers: { 'content-type': type, ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...extra },
  });

const jobItem = async (jobId: string) =>
  (await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.screenshotJob(jobId), ConsistentRead: true }))).Item!;

beforeAll(async () => {
  platform = await startTestPlatform();
  m = await makeTeamWithRoles();
  const done = await deploy(platform, m.owner.token, uniqueSite(), {
    name: uniqueName(),
    subdomain: `shot-${randomBytes(4).toString('hex')}`,
  });
  projectId = done.begin.project_id;
  deploymentId = done.begin.deployment_id;
});
afterAll(() => platform?.stop());

describe('PUT /api/v1/public/screenshots/jobs/{job_id}', () => {
  it('a publish creates a job whose message carries the page, the token and where to report', async () => {
    // The queue is the worker's platform's: other files' publishes wait in it too, so read on until this one's.
    type Found = { message: CaptureMessage; job: Record<string, any> };
    let fromPublish: Found | undefined;
    await until(async () => {
      const out = await sqs().send(new ReceiveMessageCommand({ QueueUrl: config.queueUrl('screenshots'), MaxNumberOfMessages: 10 }));
      const messages = (out.Messages ?? []).map((message) => JSON.parse(message.Body!) as CaptureMessage);
      const mine = await Promise.all(messages.map(async (message) => ({ message, job: await jobItem(message.job_id) })));
      fromPublish = mine.find(({ job }) => job.project_id === projectId && job.deployment_id === deploymentId);
      return fromPublish !== undefined || messages.length === 0;
    }, "the publish's capture message");
    expect(fromPublish).toBeDefined();
    expect(fromPublish!.job.status).toBe('pending');
    expect(fromPublish!.message.url).toMatch(/^http:\/\/shot-[0-9a-f]{8}\.localhost:\d+$/);
    expect(fromPublish!.message.upload_path).toBe(`/api/v1/public/screenshots/jobs/${fromPublish!.message.job_id}`);
    // The token is stored only as its hash.
    expect(JSON.stringify(fromPublish!.job)).not.toContain(fromPublish!.message.token);
  });

  it('a PNG is recorded once: 200 Result recorded, then 409 for the same token; the team reads it as the latest screenshot', async () => {
    const job = await newJob();
    const image = png(320, 200);
    const reply = await put(job, image, 'image/png', { 'x-capture-http-status': '200' });
    expect(reply.status).toBe(200);
    expect(reply.body.data.message).toBe('Result recorded');
    expectError(await put(job, image, 'image/png'), 409, 'SCREENSHOT_JOB_FINISHED');
    expect(await jobItem(job.job_id)).toMatchObject({
      status: 'captured',
      capture_http_status: 200,
      width: 320,
      height: 200,
      image_bytes: image.length,
    });

    const latest = await platform.api('GET', `/api/v1/projects/${projectId}/screenshot`, { token: m.member.token });
    expect(latest.status).toBe(200);
    expect(latest.body.data.screenshot).toMatchObject({
      job_id: job.job_id,
      deployment_id: deploymentId,
      capture_http_status: 200,
      width: 320,
      height: 200,
    });
    const bytes = Buffer.from(await (await fetch(latest.body.data.screenshot.image_url)).arrayBuffer());
    expect(bytes.equals(image)).toBe(true);
  });

  it('racing uploads with one token: exactly one 200, the rest 409, and only the winner is stored', async () => {
    const job = await newJob();
    const images = Array.from({ length: 8 }, (_, i) => png(100 + i, 100));
    const replies = await Promise.all(images.map((image) => put(job, image, 'image/png')));
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    for (const reply of replies.filter((r) => r.status !== 200)) expectError(reply, 409, 'SCREENSHOT_JOB_FINISHED');
    const stored = (await listKeysPage(config.bucket('bundles'), `screenshots/${m.team.id}/${projectId}/${job.job_id}-`)).keys;
    expect(stored).toHaveLength(1);
    const winner = await jobItem(job.job_id);
    expect(stored[0]).toBe(winner.image_key);
    expect(winner.width).toBe(100 + replies.findIndex((r) => r.status === 200));
  });

  it('each refused image changes nothing: corrupt 422, 63x63 422, 2561x10 422, 9 MiB 413; the token still works after', async () => {
    const job = await newJob();
    const good = png(64, 64);
    const corrupt = Buffer.from(good);
    corrupt.fill(0x42, 40, 80);
    expectError(await put(job, corrupt, 'image/png'), 422, 'SCREENSHOT_IMAGE_INVALID');
    expectError(await put(job, good.subarray(0, good.length - 20), 'image/png'), 422, 'SCREENSHOT_IMAGE_INVALID');
    expectError(await put(job, png(63, 63), 'image/png'), 422, 'SCREENSHOT_IMAGE_DIMENSIONS');
    expectError(await put(job, png(2561, 10), 'image/png'), 422, 'SCREENSHOT_IMAGE_DIMENSIONS');
    expectError(await put(job, randomBytes(9 * 1024 * 1024), 'image/png'), 413, 'PAYLOAD_TOO_LARGE');
    expectError(await put(job, good, 'text/plain'), 415, 'SCREENSHOT_MEDIA_TYPE_UNSUPPORTED');
    expectError(await put(job, good, 'image/png', { 'x-capture-http-status': 'ok' }), 400, 'VALIDATION_FAILED');
    expect((await jobItem(job.job_id)).status).toBe('pending');
    expect((await listKeysPage(config.bucket('bundles'), `screenshots/${m.team.id}/${projectId}/${job.job_id}-`)).keys).toEqual([]);
    expect((await put(job, good, 'image/png')).status).toBe(200);
  });

  it('a failed capture is reported as JSON {error, http_status}; a malformed report is 400', async () => {
    const job = await newJob();
    for (const body of [
      '{',
      JSON.stringify({ error: 'crashed', http_status: 500 }),
      JSON.stringify({ error: 'timeout' }),
      JSON.stringify({ error: 'timeout', http_status: 504, extra: 1 }),
    ]) {
      expectError(await put(job, body, 'application/json'), 400, 'VALIDATION_FAILED');
    }
    const reply = await put(job, JSON.stringify({ error: 'timeout', http_status: 504 }), 'application/json; charset=utf-8');
    expect(reply.status).toBe(200);
    expect(await jobItem(job.job_id)).toMatchObject({
      status: 'failed',
      capture_error: 'timeout',
      capture_http_status: 504,
      image_key: null,
    });
  });

  it('401 UNAUTHENTICATED without the token, with another token, or for an unknown job', async () => {
    const job = await newJob();
    const image = png(64, 64);
    expectError(await put(job, image, 'image/png', {}, null), 401, 'UNAUTHENTICATED');
    expectError(await put(job, image, 'image/png', {}, 'not-the-token'), 401, 'UNAUTHENTICATED');
    expectError(
      await put({ ...job, upload_path: '/api/v1/public/screenshots/jobs/00000000-0000-4000-8000-000000000000' }, image, 'image/png'),
      401,
      'UNAUTHENTICATED',
    );
    expectError(await put({ ...job, upload_path: '/api/v1/public/screenshots/jobs/nope' }, image, 'image/png'), 401, 'UNAUTHENTICATED');
    expect((await jobItem(job.job_id)).status).toBe('pending');
  });

  it('the latest screenshot is for the team only: outsiders 404, no token 401', async () => {
    expectError(
      await platform.api('GET', `/api/v1/projects/${projectId}/screenshot`, { token: m.outsider.token }),
      404,
      'PROJECT_NOT_FOUND',
    );
    expectError(await platform.api('GET', `/api/v1/projects/${projectId}/screenshot`), 401, 'UNAUTHENTICATED');
  });
});
