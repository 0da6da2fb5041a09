import { config } from '../config.ts';
import { signedCall, signer } from './signer.ts';

/**
 * CodeBuild's StartBuild, BatchGetBuilds and StopBuild (and CreateProject, for the tests' local endpoint) as signed `fetch`
 * calls in its JSON protocol (what the SDK speaks too): three calls do not
 * need the SDK's client and its share of a bundle. Errors carry CodeBuild's
 * error type as `name`; network failures, 5xx and throttling are retried
 * three times in all with jittered backoff.
 */
export async function codebuildCall<T>(action: 'StartBuild' | 'BatchGetBuilds' | 'StopBuild' | 'CreateProject', body: object): Promise<T> {
  const endpoint = config.awsEndpoint()?.replace(/\/+$/, '') ?? `https://codebuild.${config.awsRegion()}.amazonaws.com`;
  const init = {
    method: 'POST',
    headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': `CodeBuild_20161006.${action}` },
    body: JSON.stringify(body),
  };
  const reply = await signedCall(signer('codebuild'), `${endpoint}/`, init, ({ res, text, body: error }) => ({
    name: String(error.__type ?? `Http${res.status}`)
      .split('#')
      .pop()!,
    message: String(error.message ?? error.Message ?? text.slice(0, 200)),
  }));
  return reply.body as T;
}
