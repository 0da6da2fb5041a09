import { randomBytes, timingSafeEqual } from 'node:crypto';
import { PNG } from 'pngjs';
import { deleteObject, putObject } from '../aws/s3-lite.ts';
import { config } from '../config.ts';
import { ApiError } from '../errors/api-error.ts';
import { UNAUTHENTICATED } from '../errors/catalogue/request.ts';
import { SCREENSHOT_IMAGE_DIMENSIONS, SCREENSHOT_IMAGE_INVALID, SCREENSHOT_JOB_FINISHED } from '../errors/catalogue/sites.ts';
import { hashToken } from './jobs.ts';
import { finishJob, getJobItem, type ScreenshotJobItem } from './records.ts';
import { recordLatestScreenshot } from '../projects/records.ts';

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

/** The job a token opens; 401 for an unknown job, an expired one or another token (nothing tells them apart). */
export async function jobForToken(jobId: string, token: string | null): Promise<ScreenshotJobItem> {
  if (!token || !/^[0-9a-f-]{36}$/.test(jobId)) throw new ApiError(UNAUTHENTICATED);
  const job = await getJobItem(jobId);
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
export async function recordScreenshotResult(job: ScreenshotJobItem, result: CaptureResult, now = new Date()): Promise<void> {
  let imageKey: string | null = null;
  let size: { width: number; height: number } | null = null;
  if (result.kind === 'image') {
    size = checkPng(result.png);
    imageKey = `screenshots/${job.team_id}/${job.project_id}/${job.id}-${randomBytes(6).toString('hex')}.png`;
    await putObject({ bucket: config.bucket('bundles'), key: imageKey, body: result.png, contentType: 'image/png' });
  }
  const finished = now.toISOString();
  const finishedJob = await finishJob(job.id, job.token_hash, {
    status: result.kind === 'image' ? 'captured' : 'failed',
    finished_at: finished,
    capture_http_status: result.httpStatus,
    capture_error: result.kind === 'failure' ? result.error : null,
    image_key: imageKey,
    width: size?.width ?? null,
    height: size?.height ?? null,
    image_bytes: result.kind === 'image' ? result.png.length : null,
  }).catch(async (error: unknown) => {
    if (imageKey) await deleteObject(config.bucket('bundles'), imageKey).catch(() => undefined);
    throw error;
  });
  if (!finishedJob) {
    if (imageKey) await deleteObject(config.bucket('bundles'), imageKey).catch(() => undefined);
    throw new ApiError(SCREENSHOT_JOB_FINISHED);
  }
  if (result.kind !== 'image' || !imageKey || !size) return;
  // The project's latest screenshot: a later capture replaces an earlier one, never the other way round.
  await recordLatestScreenshot(job.project_id, {
    job_id: job.id,
    deployment_id: job.deployment_id,
    captured_at: finished,
    capture_http_status: result.httpStatus,
    width: size.width,
    height: size.height,
    image_key: imageKey,
  });
}
