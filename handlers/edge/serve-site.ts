import { createHash, timingSafeEqual } from 'node:crypto';
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { loadSecrets } from '../../lib/aws/secrets.ts';
import { config } from '../../lib/config.ts';
import { SITE_HOST_HEADER, SITE_ORIGIN_HEADER, serveSite } from '../../lib/sites/serve.ts';

// Only the function behind the public URL (methods other than GET and HEAD) is given the secret's ARN.
await loadSecrets(['siteOrigin']);

/**
 * The serve-site Lambda: CloudFront's origin for `*.{site_domain}`, reached
 * through a function URL in response-streaming mode (objects bigger than
 * Lambda's 6 MB buffered reply are served too). The function URL needs its
 * own Host, so CloudFront's viewer-request function copies the site host
 * into `x-slipway-host` (infra/site-serving.ts) and that is what we route on.
 */
interface ResponseMetadata {
  statusCode: number;
  headers: Record<string, string>;
}

/** Opens the reply: the Lambda runtime's HttpResponseStream, or any writable in tests. */
export type OpenReply = (metadata: ResponseMetadata) => Writable;

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * Whether the request may be served: always behind origin access control (no secret configured); behind the public
 * URL only with the distribution's origin header, compared in constant time.
 */
function fromDistribution(headers: Record<string, string | undefined>): boolean {
  const expected = config.secretValue('siteOrigin');
  if (!expected) return true;
  const given = headers[SITE_ORIGIN_HEADER];
  return given !== undefined && timingSafeEqual(digest(given), digest(expected));
}

export async function serveSiteEvent(event: APIGatewayProxyEventV2, open: OpenReply): Promise<void> {
  const headers = event.headers ?? {};
  if (!fromDistribution(headers)) {
    // A direct call of the public function URL: not the distribution, so no site (its geo rule is at the edge).
    open({ statusCode: 403, headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' } }).end('Forbidden\n');
    return;
  }
  const path = event.rawQueryString ? `${event.rawPath}?${event.rawQueryString}` : event.rawPath;
  const reply = await serveSite({
    host: headers[SITE_HOST_HEADER] ?? headers.host ?? '',
    path: path || '/',
    method: event.requestContext.http.method,
    headers,
  });
  const out = open({ statusCode: reply.status, headers: reply.headers });
  if (reply.body === null) out.end();
  else if (Buffer.isBuffer(reply.body)) out.end(reply.body);
  else await pipeline(reply.body, out);
}

// The Lambda Node runtime provides `awslambda.streamifyResponse`; elsewhere (bundle checks, tests) it is
// absent, though a library may have created `awslambda` itself for other purposes.
const streaming = typeof awslambda !== 'undefined' && typeof awslambda.streamifyResponse === 'function' ? awslambda : null;

export const handler = streaming
  ? streaming.streamifyResponse<APIGatewayProxyEventV2>((event, responseStream) =>
      serveSiteEvent(event, (metadata) => streaming.HttpResponseStream.from(responseStream, { ...metadata })),
    )
  : async () => {
      throw new Error('serve-site runs in the Lambda runtime (response streaming); locally sites are served by lib/local/site-host.ts');
    };
