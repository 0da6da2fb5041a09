import { config } from '../config.ts';
import { AwsLiteError, backoff, CredentialsMissingError, signer } from './signer.ts';

/**
 * SendMessage as one signed `fetch` in SQS's JSON protocol (what the SDK's
 * client speaks too), for handlers whose only queue call it is: the SQS
 * client with its share of the SDK's protocol code is about 40 KB of a
 * bundle (docs/deploy.md, "Handler bundles"). Errors carry SQS's error type
 * as `name` and the status in `$metadata.httpStatusCode`, as the SDK's do;
 * network failures, 5xx and throttling are retried three times in all with
 * jittered backoff.
 */

const MAX_ATTEMPTS = 3;
const RETRYABLE = new Set(['ThrottlingException', 'RequestThrottled', 'ServiceUnavailable', 'InternalFailure', 'InternalError']);

/** The service endpoint a queue URL lives on: the local endpoint when one is configured, else the queue URL's own origin. */
function endpointFor(queueUrl: string): string {
  return config.awsEndpoint()?.replace(/\/+$/, '') ?? new URL(queueUrl).origin;
}

export async function sendMessage(input: { queueUrl: string; body: string; delaySeconds?: number }): Promise<{ messageId: string }> {
  const payload = JSON.stringify({
    QueueUrl: input.queueUrl,
    MessageBody: input.body,
    ...(input.delaySeconds !== undefined ? { DelaySeconds: input.delaySeconds } : {}),
  });
  const aws = signer('sqs');
  for (let attempt = 1; ; attempt++) {
    let res: Response;
    try {
      res = await fetch(
        await aws.sign(`${endpointFor(input.queueUrl)}/`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.SendMessage' },
          body: payload,
        }),
      );
    } catch (error) {
      if (error instanceof CredentialsMissingError || attempt >= MAX_ATTEMPTS) throw error;
      await backoff(attempt);
      continue;
    }
    const text = await res.text().catch(() => '');
    let parsed: { MessageId?: string; __type?: string; message?: string; Message?: string } = {};
    try {
      parsed = JSON.parse(text);
    } catch {
      // A non-JSON answer (a proxy's error page): the status says enough.
    }
    if (res.ok && parsed.MessageId) return { messageId: parsed.MessageId };
    // The JSON error type; else the query-compatible header or an XML <Code> (what a server in front may answer).
    const name =
      parsed.__type?.split('#').pop() ??
      res.headers.get('x-amzn-query-error')?.split(';')[0] ??
      /<Code>([^<]+)<\/Code>/.exec(text)?.[1] ??
      `Http${res.status}`;
    if (attempt < MAX_ATTEMPTS && (res.status >= 500 || res.status === 429 || RETRYABLE.has(name))) {
      await backoff(attempt);
      continue;
    }
    const message = parsed.message ?? parsed.Message ?? /<Message>([^<]*)<\/Message>/.exec(text)?.[1] ?? `SQS answered ${res.status}`;
    throw new AwsLiteError(name, message, res.status);
  }
}
