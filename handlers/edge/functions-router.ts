import { Readable } from 'node:stream';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { DoorRequest, OpenDoorReply } from '../../lib/functions/door.ts';
import { createCloudDoor } from '../../lib/functions/hosts/cloud/cloud-door.ts';
import { SITE_HOST_HEADER } from '../../lib/sites/serve.ts';

/**
 * The functions router: CloudFront's origin for `*.{function_domain}`,
 * reached through a function URL in response-streaming mode. It runs the
 * HTTPS door (lib/functions/door.ts) with the cloud host, which invokes each
 * function's own Lambda (docs/functions.md). The function URL sees its own
 * Host, so CloudFront's viewer-request function copies the viewer's Host into
 * `x-slipway-host` (infra/functions-runtime.ts); the door drops every
 * `x-slipway-*` header before the function sees the request.
 */

const { door, telemetry, tail } = createCloudDoor();

/** The function URL event as the door's request. */
export function doorRequestOf(event: APIGatewayProxyEventV2): DoorRequest {
  const headers: [string, string][] = Object.entries(event.headers ?? {})
    .filter((pair): pair is [string, string] => typeof pair[1] === 'string')
    .map(([name, value]) => [name.toLowerCase(), value]);
  // A function URL event moves the Cookie header into `cookies`; the function gets it back as one header.
  if (event.cookies && event.cookies.length > 0) headers.push(['cookie', event.cookies.join('; ')]);
  const method = event.requestContext.http.method.toUpperCase();
  const host = headers.find(([name]) => name === SITE_HOST_HEADER)?.[1] ?? headers.find(([name]) => name === 'host')?.[1] ?? '';
  const body =
    event.body === undefined || event.body === null || method === 'GET' || method === 'HEAD'
      ? null
      : Readable.from([Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8')]);
  return {
    hostname: host,
    method,
    target: event.rawQueryString ? `${event.rawPath || '/'}?${event.rawQueryString}` : event.rawPath || '/',
    headers,
    body,
  };
}

export async function answerFunctionEvent(event: APIGatewayProxyEventV2, open: OpenDoorReply): Promise<void> {
  await door.answer(doorRequestOf(event), open);
  // The reply has been sent; a frozen container runs no timer, so the counts and a watched call's events go now.
  await Promise.all([telemetry.flush(), tail.flush()]);
}

// The Lambda Node runtime provides `awslambda.streamifyResponse`; elsewhere (bundle checks, tests) it is absent.
const streaming = typeof awslambda !== 'undefined' && typeof awslambda.streamifyResponse === 'function' ? awslambda : null;

export const handler = streaming
  ? streaming.streamifyResponse<APIGatewayProxyEventV2>((event, responseStream) =>
      answerFunctionEvent(event, (head) => streaming.HttpResponseStream.from(responseStream, { ...head })),
    )
  : async () => {
      throw new Error(
        'the functions router runs in the Lambda runtime (response streaming); locally lib/local/functions-runtime.ts answers',
      );
    };
