import { config } from '../config.ts';
import { AwsLiteError, backoff, CredentialsMissingError, signer } from './signer.ts';

/**
 * The two Route 53 calls of managed DNS on the request path (create a hosted
 * zone when a domain is added, delete it when the domain is removed), as
 * signed `fetch` calls in Route 53's REST-XML protocol. The Route 53 client
 * with the SDK's XML protocol is about 75 KB of a bundle, which put adding a
 * domain over the 350 KB handler budget (docs/deploy.md, "Handler bundles").
 * Both documents are small and fixed; the reply's few fields are read by
 * their tags. Errors carry Route 53's code as `name` and the status in
 * `$metadata.httpStatusCode`, as the SDK's do; network failures, 5xx and
 * throttling are retried three times in all with jittered backoff.
 */

const API = '2013-04-01';
const MAX_ATTEMPTS = 3;
const RETRYABLE = new Set(['Throttling', 'ThrottlingException', 'PriorRequestNotComplete', 'ServiceUnavailable', 'InternalError']);

const xmlEscape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
const xmlUnescape = (text: string) =>
  text.replace(/&(amp|lt|gt|quot|apos);/g, (_, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" })[name]!);

/** Every text of `<tag>...</tag>` in `xml`, in order. */
const textsOf = (xml: string, tag: string) => [...xml.matchAll(new RegExp(`<${tag}>([^<]*)</${tag}>`, 'g'))].map((m) => xmlUnescape(m[1]!));

/** Route 53 is global: its API answers at one endpoint, signed for us-east-1. */
const endpoint = () => config.awsEndpoint()?.replace(/\/+$/, '') ?? 'https://route53.amazonaws.com';

async function send(method: string, path: string, body?: string): Promise<string> {
  const aws = signer('route53', 'us-east-1');
  for (let attempt = 1; ; attempt++) {
    let res: Response;
    try {
      res = await fetch(
        await aws.sign(`${endpoint()}/${API}/${path}`, {
          method,
          ...(body !== undefined ? { headers: { 'content-type': 'application/xml' }, body } : {}),
        }),
      );
    } catch (error) {
      if (error instanceof CredentialsMissingError || attempt >= MAX_ATTEMPTS) throw error;
      await backoff(attempt);
      continue;
    }
    const text = await res.text().catch(() => '');
    if (res.ok) return text;
    const code = textsOf(text, 'Code')[0] ?? `Http${res.status}`;
    if (attempt < MAX_ATTEMPTS && (res.status >= 500 || res.status === 429 || RETRYABLE.has(code))) {
      await backoff(attempt);
      continue;
    }
    throw new AwsLiteError(code, textsOf(text, 'Message')[0] ?? `Route 53 answered ${res.status}`, res.status);
  }
}

/** CreateHostedZone; the caller reference makes a retried creation answer HostedZoneAlreadyExists instead of a second zone. */
export async function createHostedZone(input: {
  name: string;
  callerReference: string;
  comment: string;
}): Promise<{ id: string; nameServers: string[] }> {
  const body =
    `<?xml version="1.0" encoding="UTF-8"?><CreateHostedZoneRequest xmlns="https://route53.amazonaws.com/doc/${API}/">` +
    `<Name>${xmlEscape(input.name)}</Name><CallerReference>${xmlEscape(input.callerReference)}</CallerReference>` +
    `<HostedZoneConfig><Comment>${xmlEscape(input.comment)}</Comment><PrivateZone>false</PrivateZone></HostedZoneConfig>` +
    `</CreateHostedZoneRequest>`;
  const reply = await send('POST', 'hostedzone', body);
  const id = textsOf(reply, 'Id')[0];
  if (!id) throw new AwsLiteError('MalformedReply', 'CreateHostedZone answered without a zone id.', 200);
  return { id: id.replace(/^\/hostedzone\//, ''), nameServers: textsOf(reply, 'NameServer') };
}

export async function deleteHostedZone(id: string): Promise<void> {
  await send('DELETE', `hostedzone/${encodeURIComponent(id)}`);
}
