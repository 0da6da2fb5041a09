import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { presignGet } from '../aws/s3-lite.ts';
import { sendMessage } from '../aws/sqs-lite.ts';
import { config } from '../config.ts';
import { logger } from '../logger.ts';
import { insertJob, jobItem, jobPut, type ScreenshotJobItem } from './records.ts';
import type { ProjectItem } from '../projects/records.ts';

/**
 * Screenshots of published sites. Each publish creates a capture job with a
 * single-use upload token and queues it; a capture worker opens the site,
 * takes the screenshot and reports through
 * `PUT /api/v1/public/screenshots/jobs/{job_id}` with the token. The result
 * is recorded by one conditional write (the job still `pending`, the token's
 * hash matching), so the token works once, also under racing requests
 * (lib/screenshots/results.ts).
 */

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

interface NewJob {
  id: string;
  item: ScreenshotJobItem;
  message: CaptureMessage;
}

function newJob(input: { projectId: string; teamId: string; deploymentId: string; url: string }): NewJob {
  const id = randomUUID();
  const token = randomBytes(32).toString('base64url');
  return {
    id,
    item: jobItem({ id, ...input, tokenHash: hashToken(token).toString('hex') }),
    message: { job_id: id, token, url: input.url, upload_path: `/api/v1/public/screenshots/jobs/${id}` },
  };
}

/** Queues the capture of a recorded job. Never fails the publish: a lost screenshot is logged. */
async function queueCapture(job: NewJob, projectId: string): Promise<string | null> {
  try {
    await sendMessage({ queueUrl: config.queueUrl('screenshots'), body: JSON.stringify(job.message) });
    return job.id;
  } catch (error) {
    logger.warn('screenshot capture not queued', { project_id: projectId, job_id: job.id, error: String(error) });
    return null;
  }
}

/**
 * The capture job of a publish: its record, written by the publish's commit
 * transaction (so a live deployment always has its job, and the publish pays
 * no write of its own for it), and the queueing of its capture, once that
 * transaction committed.
 */
export function screenshotJobOfPublish(input: { projectId: string; teamId: string; deploymentId: string; url: string }) {
  const job = newJob(input);
  return {
    write: jobPut(job.item),
    queue: () => queueCapture(job, input.projectId),
  };
}

/** Creates a job and queues its capture, outside a publish. Never fails: a lost screenshot is logged. */
export async function createScreenshotJob(input: {
  projectId: string;
  teamId: string;
  deploymentId: string;
  url: string;
}): Promise<string | null> {
  const job = newJob(input);
  try {
    await insertJob(job.item);
  } catch (error) {
    logger.warn('screenshot job not created', { project_id: input.projectId, error: String(error) });
    return null;
  }
  return queueCapture(job, input.projectId);
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
export async function latestScreenshot(project: ProjectItem): Promise<ProjectScreenshot | null> {
  const shot = project.latest_screenshot as
    | (Omit<ProjectScreenshot, 'image_url' | 'image_url_expires_at'> & { image_key: string })
    | undefined;
  if (!shot) return null;
  const seconds = 900;
  const { image_key: key, ...rest } = shot;
  return {
    ...rest,
    image_url: await presignGet({ bucket: config.bucket('bundles'), key, expiresIn: seconds }),
    image_url_expires_at: new Date(Date.now() + seconds * 1000).toISOString(),
  };
}
