import { randomUUID } from 'node:crypto';
import { deleteObject, presignGet, putObject } from '../../../aws/s3-lite.ts';
import { config } from '../../../config.ts';
import { logger } from '../../../logger.ts';
import { stagedBodyPrefix } from '../../../resources.ts';
import { FunctionHostError } from '../../host.ts';
import type { DeployedFunction } from '../../model.ts';
import type { CloudRunnerEvent } from './runner-stream.ts';

/**
 * A request body too large for the user-function Lambda's invocation payload (Lambda's 6 MB, the body base64 in
 * the JSON event: about 4.4 MiB of body) is staged in the bundles bucket under `door-bodies/`, and the event
 * carries a presigned GET of it instead: the Lambda entry reads it from there (lambda-entry.ts). The user function
 * holds no permission; the URL, valid a few minutes, is its only access. The object is deleted once the reply has
 * ended (best effort: the bucket's lifecycle rule removes any left after a day).
 */

/** Lambda's limit on a synchronous invocation's request payload, InvokeWithResponseStream's included. */
export const INVOKE_PAYLOAD_LIMIT_BYTES = 6 * 1024 * 1024;

/** How long the Lambda may take to start reading a staged body. */
const STAGED_URL_SECONDS = 300;

export interface RunnerPayload {
  /** The invocation's payload: the event as JSON. */
  payload: Buffer;
  /** Deletes the staged body, if any (never throws). */
  discard(): void;
}

/** The invocation payload for this request: the body inline (base64) when it fits, else staged. */
export async function runnerPayload(
  fn: DeployedFunction,
  event: Omit<CloudRunnerEvent, 'bodyBase64'>,
  body: Buffer | null,
): Promise<RunnerPayload> {
  const inline = Buffer.from(JSON.stringify({ ...event, bodyBase64: body ? body.toString('base64') : null }));
  // Lambda refuses a payload of the limit itself ("must be smaller than").
  if (!body || inline.length < INVOKE_PAYLOAD_LIMIT_BYTES) return { payload: inline, discard: () => {} };
  const bucket = config.bucket('bundles');
  const key = `${stagedBodyPrefix}${fn.function_id}/${randomUUID()}`;
  let bodyUrl: string;
  try {
    await putObject({ bucket, key, body, contentType: 'application/octet-stream' });
    bodyUrl = await presignGet({ bucket, key, expiresIn: STAGED_URL_SECONDS });
  } catch (error) {
    throw new FunctionHostError('start_failed', `the request body could not be staged: ${String(error)}`);
  }
  let discarded = false;
  return {
    payload: Buffer.from(JSON.stringify({ ...event, bodyBase64: null, bodyUrl })),
    discard() {
      if (discarded) return;
      discarded = true;
      deleteObject(bucket, key).catch((error) =>
        logger.warn('a staged request body was not deleted (the lifecycle rule will)', { key, error: String(error) }),
      );
    },
  };
}
