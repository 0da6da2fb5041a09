import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { SITE_HOST_HEADER, serveSite } from '../../lib/sites/serve.ts';

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

export async function serveSiteEvent(event: APIGatewayProxyEventV2, open: OpenReply): Promise<void> {
  const headers = event.headers ?? {};
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
