import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import { epochSeconds, keys } from '../db/keys.ts';
import type { NamedWrite } from '../db/transact.ts';
import { getItem, type Stored } from '../db/item.ts';

/**
 * The records of screenshot capture jobs: one item per job, `pending` with the hash of its single-use
 * token until one conditional write finishes it (`captured` or `failed`), so the token works once.
 */

/** A job and its token expire after a day: a capture that never reported is of no use later. */
const JOB_TTL_SECONDS = 86_400;

/** A capture job's item: `pending` until its one report finishes it (a finished job also has `finished_at`). */
export type ScreenshotJobItem = Stored<{
  type: 'screenshot_job';
  id: string;
  project_id: string;
  team_id: string;
  deployment_id: string;
  url: string;
  token_hash: string;
  status: 'pending' | 'captured' | 'failed';
  created_at: string;
  finished_at?: string;
  ttl: number;
}>;

export function jobItem(job: {
  id: string;
  projectId: string;
  teamId: string;
  deploymentId: string;
  url: string;
  tokenHash: string;
}): ScreenshotJobItem {
  const now = new Date();
  return {
    ...keys.screenshotJob(job.id),
    type: 'screenshot_job',
    id: job.id,
    project_id: job.projectId,
    team_id: job.teamId,
    deployment_id: job.deploymentId,
    url: job.url,
    token_hash: job.tokenHash,
    status: 'pending',
    created_at: now.toISOString(),
    ttl: epochSeconds(now) + JOB_TTL_SECONDS,
  };
}

/** The job written with a publish's commit (`screenshot`). */
export const jobPut = (item: ScreenshotJobItem): NamedWrite => ({ name: 'screenshot', write: { Put: { Item: item } } });

export async function insertJob(item: ScreenshotJobItem): Promise<void> {
  await dynamo().send(new PutCommand({ TableName: config.tableName(), Item: item }));
}

export function getJobItem(jobId: string): Promise<ScreenshotJobItem | null> {
  return getItem<ScreenshotJobItem>(keys.screenshotJob(jobId), true);
}

/** What a finished job records of its capture. */
export interface JobOutcome {
  status: 'captured' | 'failed';
  finished_at: string;
  capture_http_status: number | null;
  capture_error: string | null;
  image_key: string | null;
  width: number | null;
  height: number | null;
  image_bytes: number | null;
}

/** Finishes a job still `pending` under this token's hash; false when another request finished it first. */
export async function finishJob(jobId: string, tokenHash: string, outcome: JobOutcome): Promise<boolean> {
  try {
    await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.screenshotJob(jobId),
        UpdateExpression:
          'SET #status = :status, finished_at = :now, capture_http_status = :http, capture_error = :error, image_key = :key, ' +
          'width = :width, height = :height, image_bytes = :bytes',
        ConditionExpression: '#status = :pending AND token_hash = :hash',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':status': outcome.status,
          ':pending': 'pending',
          ':hash': tokenHash,
          ':now': outcome.finished_at,
          ':http': outcome.capture_http_status,
          ':error': outcome.capture_error,
          ':key': outcome.image_key,
          ':width': outcome.width,
          ':height': outcome.height,
          ':bytes': outcome.image_bytes,
        },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionalCheckFailure(error)) return false;
    throw error;
  }
}
