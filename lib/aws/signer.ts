import { AwsClient } from 'aws4fetch';
import { config } from '../config.ts';
import { type JsonObject } from '../json.ts';

/**
 * Signature V4 signers (aws4fetch: Web Crypto, ~11 KB, no dependencies) for
 * the few calls made without an SDK client (lib/aws/s3-lite.ts,
 * lib/aws/sqs-lite.ts), with the credentials Lambda puts in the environment
 * (as infra/bundling.ts notes, the SDK's default chain finds them there
 * first, and the local platform sets them too).
 */

/**
 * What a signed call answers when the service refuses it: the service's error
 * code as `name` and the status in `$metadata.httpStatusCode`, as the SDK's
 * errors carry them, so callers test `name` whichever way the call was made.
 */
export class AwsLiteError extends Error {
  readonly $metadata: { httpStatusCode: number };
  constructor(name: string, message: string, status: number) {
    super(message);
    this.name = name;
    this.$metadata = { httpStatusCode: status };
  }
}

export class CredentialsMissingError extends Error {
  override readonly name = 'CredentialsProviderError';
  readonly $metadata = { httpStatusCode: 0 };
  constructor() {
    super('No AWS credentials in the environment.');
  }
}

const cached = new Map<string, { key: string; client: AwsClient }>();

/**
 * A signer for `service` with the credentials in the environment now, kept
 * while they stay the same (it caches its signing key). `region` for a global
 * service signed in one region (Route 53: us-east-1).
 */
export function signer(service: string, region = config.awsRegion()): AwsClient {
  const { accessKeyId, secretAccessKey, sessionToken } = config.awsCredentials();
  if (!accessKeyId || !secretAccessKey) throw new CredentialsMissingError();
  const key = [accessKeyId, secretAccessKey, sessionToken, region].join('\n');
  const hit = cached.get(`${service}@${region}`);
  if (hit?.key === key) return hit.client;
  const client = new AwsClient({ accessKeyId, secretAccessKey, sessionToken, service, region });
  cached.set(`${service}@${region}`, { key, client });
  return client;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Jittered exponential backoff before attempt `attempt + 1`, as the SDK's standard retry. */
export const backoff = (attempt: number) => sleep(Math.random() * 100 * 2 ** attempt);

/** A signed call's answer: its response, its text, and that text as JSON (empty when it is not JSON). */
export interface SignedReply {
  res: Response;
  text: string;
  body: JsonObject;
}

const MAX_ATTEMPTS = 3;
const RETRYABLE_ERRORS = new Set(['ThrottlingException', 'RequestThrottled', 'ServiceUnavailable', 'InternalFailure', 'InternalError']);

/**
 * One signed `fetch` of the -lite modules: network failures, 5xx, 429 and the
 * services' throttling and internal error types are retried three times in all
 * with jittered backoff. A 2xx answer is returned; any other throws an
 * AwsLiteError named and worded by `errorOf` (each protocol says it elsewhere).
 */
export async function signedCall(
  aws: AwsClient,
  url: string,
  init: RequestInit,
  errorOf: (reply: SignedReply) => { name: string; message: string },
): Promise<SignedReply> {
  for (let attempt = 1; ; attempt++) {
    let res: Response;
    try {
      res = await fetch(await aws.sign(url, init));
    } catch (error) {
      if (error instanceof CredentialsMissingError || attempt >= MAX_ATTEMPTS) throw error;
      await backoff(attempt);
      continue;
    }
    const text = await res.text().catch(() => '');
    let body: JsonObject = {};
    try {
      body = JSON.parse(text) as JsonObject;
    } catch {
      // A non-JSON answer (a proxy's error page): the status says enough.
    }
    if (res.ok) return { res, text, body };
    const { name, message } = errorOf({ res, text, body });
    if (attempt < MAX_ATTEMPTS && (res.status >= 500 || res.status === 429 || RETRYABLE_ERRORS.has(name))) {
      await backoff(attempt);
      continue;
    }
    throw new AwsLiteError(name, message, res.status);
  }
}
