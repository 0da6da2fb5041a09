import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { PNG } from 'pngjs';
import { dynamo } from '../aws/clients.ts';
import { deleteObject, presignGet, putObject } from '../aws/s3-lite.ts';
import { sqs } from '../aws/sqs.ts';
import { config } from '../config.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import { epochSeconds, keys } from '../db/keys.ts';
import { ApiError } from '../http/errors.ts';
import { logger } from '../http/logger.ts';

/**
 * Screenshots of published sites. Each publish creates a capture job with a
 * single-use upload token and queues it; a capture worker opens the site,
 * takes the screenshot and reports through
 * `PUT /api/v1/public/screenshots/jobs/{job_id}` with the token. The result
 * is recorded by one conditional write (the job still `pending`, the token's
 * hash matching), so the token works once, also under racing requests.
 */

export const SCREENSHOT_MAX_BYTES = 8 * 1024 * 1024;
export const SCREENSHOT_MIN = { width: 64, height: 64 } as const;
export const SCREENSHOT_MAX = { width: 2560, height: 4096 } as const;
/** A job and its token expire after a day: a capture that never reported is of no use later. */
const JOB_TTL_SECONDS = 86_400;

/** What the capture worker receives on the screenshots queue. */
export interface CaptureMessage {
  job_id: string;
  token: string;
  /** The page to capture: the project's production URL. */
  url: string;
  /** Where to report, relative to the API's base URL. */
  upload_path: string;
}

const hashToken = (token: string) => createHash('sha256').update(token).digest();

/** Creates the job of a publish and queues its capture. Never fails the publish: a lost screenshot is logged. */
export async function createScreenshotJob(input: { projectId: string; teamId: string; deploymentId: string; url: string }): Promise<string | null> {
  const jobId = randomUUID();
  const token = randomBytes(32).toString('base64url');
  const now = new Date();
  try {
    await dynamo().send(
      new PutCommand({
        TableName: config.tableName(),
        Item: {
          ...keys.screenshotJob(jobId),
          type: 'screenshot_job',
          id: jobId,
          project_id: input.projectId,
          team_id: input.teamId,
          deployment_id: input.deploymentId,
          url: input.url,
          token_hash: hashToken(token).toString('hex'),
          status: 'pending',
          created_at: now.toISOString(),
          ttl: epochSeconds(now) + JOB_TTL_SECONDS,
        },
      }),
    );
    const message: CaptureMessage = { job_id: jobId, token, url: input.url, upload_path: `/api/v1/public/screenshots/jobs/${jobId}` };
    await sqs().send(new SendMessageCommand({ QueueUrl: config.queueUrl('screenshots'), MessageBody: JSON.stringify(message) }));
    return jobId;
  } catch (error) {
    logger.warn('screenshot job not created', { project_id: input.projectId, error: String(error) });
    return null;
  }
}

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
  if (!token || !/^[0-9a-f-]{36}$/.test(jobId)) throw new ApiError('UNAUTHENTICATED');
  const job = (await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.screenshotJob(jobId), ConsistentRead: true }))).Item as
    | JobRecord
    | undefined;
  if (!job || job.ttl * 1000 < Date.now()) throw new ApiError('UNAUTHENTICATED');
  const expected = Buffer.from(job.token_hash, 'hex');
  if (!timingSafeEqual(expected, hashToken(token))) throw new ApiError('UNAUTHENTICATED');
  if (job.status !== 'pending') throw new ApiError('SCREENSHOT_JOB_FINISHED');
  return job;
}

/** Decodes the PNG in full (a corrupt one is refused, not stored) and checks its size. */
export function checkPng(png: Buffer): { width: number; height: number } {
  let width: number;
  let height: number;
  try {
    ({ width, height } = PNG.sync.read(png));
  } catch {
    throw new ApiError('SCREENSHOT_IMAGE_INVALID');
  }
  if (width < SCREENSHOT_MIN.width || height < SCREENSHOT_MIN.height || width > SCREENSHOT_MAX.width || height > SCREENSHOT_MAX.height) {
    throw new ApiError('SCREENSHOT_IMAGE_DIMENSIONS', { details: { width, height, min: SCREENSHOT_MIN, max: SCREENSHOT_MAX } });
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
    if (isConditionalCheckFailure(error)) throw new ApiError('SCREENSHOT_JOB_FINISHED');
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

export interface ProjectScreenshot {
  job_id: string;
  deployment_id: string;
  captured_at: string;
  capture_http_status: number | null;
  width: number;
  height: number;
  /** A signed link to the PNG, valid 15 minutes. */
  image_url: string;
  image_url_expires_at: string;
}

/** The project's latest screenshot, or null before the first capture. */
export async function latestScreenshot(project: Record<string, unknown>): Promise<ProjectScreenshot | null> {
  const shot = project.latest_screenshot as (Omit<ProjectScreenshot, 'image_url' | 'image_url_expires_at'> & { image_key: string }) | undefined;
  if (!shot) return null;
  const seconds = 900;
  const { image_key: key, ...rest } = shot;
  return {
    ...rest,
    image_url: await presignGet({ bucket: config.bucket('bundles'), key, expiresIn: seconds }),
    image_url_expires_at: new Date(Date.now() + seconds * 1000).toISOString(),
  };
}
