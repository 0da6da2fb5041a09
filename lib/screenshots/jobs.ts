import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { presignGet } from '../aws/s3-lite.ts';
import { sendMessage } from '../aws/sqs-lite.ts';
import { config } from '../config.ts';
import { epochSeconds, keys } from '../db/keys.ts';
import { logger } from '../http/logger.ts';

/**
 * Screenshots of published sites. Each publish creates a capture job with a
 * single-use upload token and queues it; a capture worker opens the site,
 * takes the screenshot and reports through
 * `PUT /api/v1/public/screenshots/jobs/{job_id}` with the token. The result
 * is recorded by one conditional write (the job still `pending`, the token's
 * hash matching), so the token works once, also under racing requests
 * (lib/screenshots/results.ts).
 */

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

export const hashToken = (token: string) => createHash('sha256').update(token).digest();

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
    await sendMessage({ queueUrl: config.queueUrl('screenshots'), body: JSON.stringify(message) });
    return jobId;
  } catch (error) {
    logger.warn('screenshot job not created', { project_id: input.projectId, error: String(error) });
    return null;
  }
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
