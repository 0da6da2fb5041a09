import { AwsClient } from 'aws4fetch';
import { config } from '../config.ts';

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
  const accessKeyId = process.env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = process.env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) throw new CredentialsMissingError();
  const sessionToken = process.env.AWS_SESSION_TOKEN || undefined;
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
