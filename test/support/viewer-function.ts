import { compileViewerFunction, selectedOriginOf } from '../../local-cloud/cloudfront/cloudfront.ts';

/** The line a cloudfront-js-2.0 function that selects origins starts with. */
export const CLOUDFRONT_IMPORT = "import cf from 'cloudfront';";

export interface ViewerRun {
  /** What the function returned: the request to pass on, or a reply of its own. */
  result: any;
  /** The origin id it selected through `cf.selectRequestOriginById` (the last one counts), or none. */
  selected: string[];
}

/**
 * A viewer-request function's code run as the synthesized mode's CloudFront runs it (compileViewerFunction: a VM
 * context with a stand-in `cloudfront` module that throws for an id the distribution does not have), on one
 * request at a time, with the origin it chose.
 */
export function viewerFunction(code: string, origins: readonly string[]): (request: object, viewerIp?: string) => ViewerRun {
  if (!code.startsWith(`${CLOUDFRONT_IMPORT}\n`)) throw new Error(`the viewer function does not start with ${CLOUDFRONT_IMPORT}`);
  const run = compileViewerFunction(code, [...origins]);
  return (request, viewerIp = '198.51.100.7') => {
    const result = run(request as Parameters<typeof run>[0], viewerIp);
    const selected = selectedOriginOf(result);
    return { result, selected: selected === null ? [] : [selected] };
  };
}
