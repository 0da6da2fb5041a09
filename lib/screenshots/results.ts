import { randomBytes, timingSafeEqual } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { PNG } from 'pngjs';
import { dynamo } from '../aws/clients.ts';
import { deleteObject, putObject } from '../aws/s3-lite.ts';
import { config } from '../config.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import { keys } from '../db/keys.ts';
import { ApiError } from '../errors/api-error.ts';
import { SCREENSHOT_IMAGE_DIMENSIONS, SCREENSHOT_IMAGE_INVALID, SCREENSHOT_JOB_FINISHED, UNAUTHENTICATED } from '../errors/catalogue.ts';
import { hashToken } from './jobs.ts';

/**
 * What a capture worker reports for a job (`PUT /api/v1/public/screenshots/jobs/{job_id}`):
 * the token check, the PNG check and the conditional write that finishes the
 * job. Apart from lib/screenshots/jobs.ts so that publishing, which only
 * creates jobs, does not bundle a PNG decoder.
 */

export const SCREENSHOT_MAX_BYTES = 8 * 1024 * 1024;
export const SCREENSHOT_MIN = { width: 64, height: 64 } as const;
export const SCREENSHOT_MAX = { width: 2560, height: 4096 } as const;

export type CaptureResult =
  | { kind: 'image'; png: Buffer; httpStatus: number | null }
  | { kind: 'failure'; error: 'unreachable' | 'timeout'; httpStatus: number };

interface JobRecord {
  id: string;
  project_id: string;
  team_id: string;
  deployment_id: string;
  token_hash: string;
  status: 'pending' | 'captured' | 'failed';
  ttl: number;
}

/** The job a token opens; 401 for an unknown job, an expired one or another token (nothing tells them apart). */
export async function jobForToken(jobId: string, token: string | null): Promise<JobRecord> {
  if (!token || !/^[0-9a-f-]{36}$/.test(jobId)) throw new ApiError(UNAUTHENTICATED);
  const job = (await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.screenshotJob(jobId), ConsistentRead: true })))
    .Item as JobRecord | undefined;
  if (!job || job.ttl * 1000 < Date.now()) throw new ApiError(UNAUTHENTICATED);
  const expected = Buffer.from(job.token_hash, 'hex');
  if (!timingSafeEqual(expected, hashToken(token))) throw new ApiError(UNAUTHENTICATED);
  if (job.status !== 'pending') throw new ApiError(SCREENSHOT_JOB_FINISHED);
  return job;
}

/** Decodes the PNG in full (a corrupt one is refused, not stored) and checks its size. */
export function checkPng(png: Buffer): { width: number; height: number } {
  let width: number;
  let height: number;
  try {
    ({ width, height } = PNG.sync.read(png));
  } catch {
    throw new ApiError(SCREENSHOT_IMAGE_INVALID);
  }
  if (width < SCREENSHOT_MIN.width || height < SCREENSHOT_MIN.height || width > SCREENSHOT_MAX.width || height > SCREENSHOT_MAX.height) {
    throw new ApiError(SCREENSHOT_IMAGE_DIMENSIONS, { details: { width, height, min: SCREENSHOT_MIN, max: SCREENSHOT_MAX } });
  }
  return { width, height };
}

/**
 * Records the result of a job whose token was checked. The image is stored
 * under a key of this attempt first, then the job is finished by a
 * conditional write; a request that loses the race deletes its copy and gets
 * 409, so the stored screenshot is always the winner's.
 */
export async function recordScreenshotResult(job: JobRecord, result: CaptureResult, now = new Date()): Promise<void> {
  const table = config.tableName();
  let imageKey: string | null = null;
  let size: { width: number; height: number } | null = null;
  if (result.kind === 'image') {
    size = checkPng(result.png);
    imageKey = `screenshots/${job.team_id}/${job.project_id}/${job.id}-${randomBytes(6).toString('hex')}.png`;
    await putObject({ bucket: config.bucket('bundles'), key: imageKey, body: result.png, contentType: 'image/png' });
  }
  const finished = now.toISOString();
  try {
    await dynamo().send(
      new UpdateCommand({
        TableName: table,
        Key: keys.screenshotJob(job.id),
        UpdateExpression:
          'SET #status = :status, finished_at = :now, capture_http_status = :http, capture_error = :error, image_key = :key, width = :width, height = :height, image_bytes = :bytes',
        ConditionExpression: '#status = :pending AND token_hash = :hash',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':status': result.kind === 'image' ? 'captured' : 'failed',
          ':pending': 'pending',
          ':hash': job.token_hash,
          ':now': finished,
          ':http': result.httpStatus,
          ':error': result.kind === 'failure' ? result.error : null,
          ':key': imageKey,
          ':width': size?.width ?? null,
          ':height': size?.height ?? null,
          ':bytes': result.kind === 'image' ? result.png.length : null,
        },
      }),
    );
  } catch (error) {
    if (imageKey) await deleteObject(config.bucket('bundles'), imageKey).catch(() => undefined);
    if (isConditionalCheckFailure(error)) throw new ApiError(SCREENSHOT_JOB_FINISHED);
    throw error;
  }
  if (result.kind !== 'image') return;
  // The project's latest screenshot: a later capture replaces an earlier one, never the other way round.
  await dynamo()
    .send(
      new UpdateCommand({
        TableName: table,
        Key: keys.project(job.project_id),
        UpdateExpression: 'SET latest_screenshot = :shot',
        ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(latest_screenshot) OR latest_screenshot.captured_at < :now)',
        ExpressionAttributeValues: {
          ':now': finished,
          ':shot': {
            job_id: job.id,
            deployment_id: job.deployment_id,
            captured_at: finished,
            capture_http_status: result.httpStatus,
            width: size!.width,
            height: size!.height,
            image_key: imageKey,
          },
        },
      }),
    )
    .catch((error: unknown) => {
      if (!isConditionalCheckFailure(error)) throw error;
    });
}
