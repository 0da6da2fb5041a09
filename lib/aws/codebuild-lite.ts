import { config } from '../config.ts';
import { AwsLiteError, backoff, CredentialsMissingError, signer } from './signer.ts';

/**
 * CodeBuild's StartBuild, BatchGetBuilds and StopBuild (and CreateProject, for the tests' local endpoint) as signed `fetch`
 * calls in its JSON protocol (what the SDK speaks too): three calls do not
 * need the SDK's client and its share of a bundle. Errors carry CodeBuild's
 * error type as `name`; network failures, 5xx and throttling are retried
 * three times in all with jittered backoff.
 */
const MAX_ATTEMPTS = 3;

export async function codebuildCall<T>(action: 'StartBuild' | 'BatchGetBuilds' | 'StopBuild' | 'CreateProject', body: object): Promise<T> {
  const endpoint = config.awsEndpoint()?.replace(/\/+$/, '') ?? `https://codebuild.${config.awsRegion()}.amazonaws.com`;
  const aws = signer('codebuild');
  for (let attempt = 1; ; attempt++) {
    let res: Response;
    try {
      res = await fetch(
        await aws.sign(`${endpoint}/`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': `CodeBuild_20161006.${action}` },
          body: JSON.stringify(body),
        }),
      );
    } catch (error) {
      if (error instanceof CredentialsMissingError || attempt >= MAX_ATTEMPTS) throw error;
      await backoff(attempt);
      continue;
    }
    const text = await res.text().catch(() => '');
    let parsed: Record<string, unknown> = {};
    try {
      parsed = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // A non-JSON answer: the status says enough.
    }
    if (res.ok) return parsed as T;
    const name = String(parsed.__type ?? `Http${res.status}`)
      .split('#')
      .pop()!;
    if (attempt < MAX_ATTEMPTS && (res.status >= 500 || res.status === 429 || name === 'ThrottlingException')) {
      await backoff(attempt);
      continue;
    }
    throw new AwsLiteError(name, String(parsed.message ?? parsed.Message ?? text.slice(0, 200)), res.status);
  }
}
