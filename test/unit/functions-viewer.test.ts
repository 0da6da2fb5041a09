import { describe, expect, it } from 'vitest';
import { DOOR_ORIGIN_ID, functionsViewerCode, ROUTER_BODY_LIMIT_BYTES } from '../../infra/functions-viewer.ts';
import { CLOUDFRONT_IMPORT, viewerFunction } from '../support/viewer-function.ts';

/**
 * The functions distribution's viewer function (infra/functions-viewer.ts) choosing the origin of each request: the
 * container door (`door-large-bodies`) for a body the router's function URL may not take, the router (its default
 * origin, nothing selected) for every other; the 413 over 10 MiB before either.
 */
const run = viewerFunction(functionsViewerCode(), [DOOR_ORIGIN_ID]);

function request(method: string, length?: string) {
  return {
    method,
    uri: '/',
    querystring: {},
    cookies: {},
    headers: {
      host: { value: 'echo-sub.fn.example.site' },
      ...(length === undefined ? {} : { 'content-length': { value: length } }),
    },
  };
}

describe('the viewer function chooses the origin', () => {
  it('starts by importing the cloudfront module, and the router limit is 4 MiB', () => {
    expect(functionsViewerCode().split('\n')[0]).toBe(CLOUDFRONT_IMPORT);
    expect(DOOR_ORIGIN_ID).toBe('door-large-bodies');
    expect(ROUTER_BODY_LIMIT_BYTES).toBe(4_194_304);
  });

  it.each([
    ['POST', '4194305'],
    ['POST', '10485760'],
    ['PUT', '6291456'],
    ['PATCH', '5000000'],
    ['DELETE', '4194305'],
    ['POST', undefined],
    ['PUT', undefined],
    ['DELETE', undefined],
    ['POST', 'twelve'],
  ])('%s with Content-Length %s goes to the container door, its Host copied', (method, length) => {
    const { result, selected } = run(request(method, length));
    expect(selected).toEqual(['door-large-bodies']);
    expect(result.statusCode).toBeUndefined();
    expect(result.headers['x-slipway-host']).toEqual({ value: 'echo-sub.fn.example.site' });
  });

  it.each([
    ['POST', '4194304'],
    ['POST', '0'],
    ['PUT', '1024'],
    ['GET', undefined],
    ['HEAD', undefined],
    ['OPTIONS', undefined],
    ['GET', '6291456'],
    ['OPTIONS', '6291456'],
  ])('%s with Content-Length %s goes to the router (no origin selected), its Host copied', (method, length) => {
    const { result, selected } = run(request(method, length));
    expect(selected).toEqual([]);
    expect(result.statusCode).toBeUndefined();
    expect(result.headers['x-slipway-host']).toEqual({ value: 'echo-sub.fn.example.site' });
  });

  it.each(['10485761', '99999999'])("a declared body of %s bytes gets the door's 413 envelope here, no origin selected", (length) => {
    const { result, selected } = run(request('POST', length));
    expect(selected).toEqual([]);
    expect(result.statusCode).toBe(413);
    expect(JSON.parse(result.body.data).code).toBe('FUNCTION_BODY_TOO_LARGE');
  });

  it('names an origin the stand-in distribution must have: an unknown id would throw there', () => {
    const elsewhere = viewerFunction(functionsViewerCode(), ['some-other-origin']);
    expect(() => elsewhere(request('POST'))).toThrow('"door-large-bodies" is not an origin of this distribution');
  });
});
