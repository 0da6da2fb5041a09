import { FUNCTION_BODY_TOO_LARGE } from '../lib/errors/catalogue/functions.ts';
import { COLD_START_HEADER } from '../lib/functions/door.ts';
import { MAX_DOOR_BODY_BYTES } from '../lib/functions/model.ts';
import { SITE_HOST_HEADER } from '../lib/sites/serve.ts';

/** The container door's origin in the functions distribution (infra/functions-door.ts), as the viewer function selects it. */
export const DOOR_ORIGIN_ID = 'door-large-bodies';

/**
 * The largest declared body the router's function URL is sent: its event is capped at 6 MB and carries a binary body
 * base64, so 4 MiB (5.6 MB base64) plus the event's headers fit.
 */
export const ROUTER_BODY_LIMIT_BYTES = 4 * 1024 * 1024;

/**
 * The viewer-request function (cloudfront-js-2.0) of the functions distribution.
 *
 * - A declared `Content-Length` over 10 MiB gets the door's own 413 envelope here: no Lambda front takes such a
 *   body (the function URL's invocation payload is 6 MB), so without this the caller would get Lambda's own 413.
 *   The body is the door's (lib/functions/door.ts `fail`): code, details, error and meta, whose trace id is the
 *   caller's `traceparent` one when it is valid, and the cold-start header says false.
 * - Otherwise the viewer's Host is copied into `x-slipway-host`: the function URL sees its own Host.
 * - A request that may carry a body too large for the router's function URL (a method other than GET, HEAD and
 *   OPTIONS with no `Content-Length`, one that is not a number, or one over 4 MiB) goes to the container door's
 *   origin (`cf.selectRequestOriginById`), which takes bodies up to 10 MiB and refuses a larger chunked one itself.
 *   Every other request goes to the router.
 *
 * CloudFront Functions have no crypto random source, so the request id is a version-4-shaped id from Math.random
 * (it is only ever shown to the caller, as the door's own is).
 */
export function functionsViewerCode(): string {
  const envelope = { code: FUNCTION_BODY_TOO_LARGE.code, error: FUNCTION_BODY_TOO_LARGE.message };
  return `import cf from 'cloudfront';
var MAX_BODY = ${MAX_DOOR_BODY_BYTES};
var ROUTER_MAX_BODY = ${ROUTER_BODY_LIMIT_BYTES};
var DOOR_ORIGIN = ${JSON.stringify(DOOR_ORIGIN_ID)};
var TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
function hex(n) {
  var out = '';
  for (var i = 0; i < n; i++) out += Math.floor(Math.random() * 16).toString(16);
  return out;
}
function traceId(header) {
  var m = header ? TRACEPARENT.exec(header.value.trim()) : null;
  if (m && m[1] !== 'ff' && !/^0+$/.test(m[2]) && !/^0+$/.test(m[3])) return m[2];
  return hex(32);
}
function tooLarge(request) {
  var requestId = hex(8) + '-' + hex(4) + '-4' + hex(3) + '-' + '89ab'[Math.floor(Math.random() * 4)] + hex(3) + '-' + hex(12);
  var body = JSON.stringify({
    code: ${JSON.stringify(envelope.code)},
    details: null,
    error: ${JSON.stringify(envelope.error)},
    meta: { request_id: requestId, timestamp: new Date().toISOString(), trace_id: traceId(request.headers.traceparent) }
  });
  return {
    statusCode: ${FUNCTION_BODY_TOO_LARGE.status},
    statusDescription: 'Payload Too Large',
    headers: {
      'content-type': { value: 'application/json; charset=utf-8' },
      '${COLD_START_HEADER}': { value: 'false' }
    },
    body: { encoding: 'text', data: body }
  };
}
function mayBeLarge(request, length) {
  var method = request.method;
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return false;
  return !length || !/^[0-9]+$/.test(length.value) || Number(length.value) > ROUTER_MAX_BODY;
}
function handler(event) {
  var request = event.request;
  var length = request.headers['content-length'];
  if (length && /^[0-9]+$/.test(length.value) && Number(length.value) > MAX_BODY) return tooLarge(request);
  request.headers['${SITE_HOST_HEADER}'] = { value: request.headers.host ? request.headers.host.value : '' };
  if (mayBeLarge(request, length)) cf.selectRequestOriginById(DOOR_ORIGIN);
  return request;
}
`;
}
