import { PassThrough } from 'node:stream';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { serveSiteEvent } from '../../handlers/edge/serve-site.ts';

/**
 * The serve-site Lambda run as CloudFront reaches it: the function URL's own
 * Host, the site host in `x-slipway-host`, the query apart.
 */
export function cloudFrontEvent(
  siteHost: string,
  path: string,
  query = '',
  method = 'GET',
  headers: Record<string, string> = {},
): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: query,
    headers: { host: 'abc123.lambda-url.us-east-1.on.aws', 'x-slipway-host': siteHost, ...headers },
    requestContext: { http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: '' } },
    isBase64Encoded: false,
  } as unknown as APIGatewayProxyEventV2;
}

/** Runs the streaming handler and collects what it wrote: status, headers and body. */
export async function invokeServeSite(
  e: APIGatewayProxyEventV2,
): Promise<{ statusCode: number; headers: Record<string, string>; body: Buffer }> {
  let metadata: { statusCode: number; headers: Record<string, string> } | null = null;
  const chunks: Buffer[] = [];
  const stream = new PassThrough();
  stream.on('data', (c: Buffer) => chunks.push(c));
  await serveSiteEvent(e, (meta) => {
    metadata = meta;
    return stream;
  });
  return { ...metadata!, body: Buffer.concat(chunks) };
}
