import { config } from '../config.ts';
import { AwsLiteError, type SignedReply, signedCall, signer } from './signer.ts';

/**
 * SendMessage as one signed `fetch` in SQS's JSON protocol (what the SDK's
 * client speaks too), for handlers whose only queue call it is: the SQS
 * client with its share of the SDK's protocol code is about 40 KB of a
 * bundle (docs/deploy.md, "Handler bundles"). Errors carry SQS's error type
 * as `name` and the status in `$metadata.httpStatusCode`, as the SDK's do;
 * network failures, 5xx and throttling are retried three times in all with
 * jittered backoff.
 */

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
  const init = {
    method: 'POST',
    headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.SendMessage' },
    body: payload,
  };
  const { res, body } = await signedCall(signer('sqs'), `${endpointFor(input.queueUrl)}/`, init, errorOf);
  if (typeof body.MessageId !== 'string')
    throw new AwsLiteError(`Http${res.status}`, `SQS answered ${res.status} without a MessageId`, res.status);
  return { messageId: body.MessageId };
}

/** The JSON error type; else the query-compatible header or an XML <Code> (what a server in front may answer). */
function errorOf({ res, text, body }: SignedReply): { name: string; message: string } {
  const name =
    (typeof body.__type === 'string' ? body.__type.split('#').pop() : undefined) ??
    res.headers.get('x-amzn-query-error')?.split(';')[0] ??
    /<Code>([^<]+)<\/Code>/.exec(text)?.[1] ??
    `Http${res.status}`;
  const message = String(body.message ?? body.Message ?? /<Message>([^<]*)<\/Message>/.exec(text)?.[1] ?? `SQS answered ${res.status}`);
  return { name, message };
}
