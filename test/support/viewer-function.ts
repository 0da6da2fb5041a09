import { Script, createContext } from 'node:vm';

/** The line a cloudfront-js-2.0 function that selects origins starts with. */
export const CLOUDFRONT_IMPORT = "import cf from 'cloudfront';";

export interface ViewerRun {
  /** What the function returned: the request to pass on, or a reply of its own. */
  result: any;
  /** The origin ids it selected through `cf.selectRequestOriginById`, in order. */
  selected: string[];
}

/**
 * A viewer-request function's code, run on one request in a VM context of its own with a stand-in `cloudfront`
 * module whose `selectRequestOriginById` records the id, and throws for an id the distribution does not have, as
 * CloudFront does. The code's import line is the module's only way in (a script context has no `import`).
 */
export function viewerFunction(code: string, origins: readonly string[]): (request: object, viewerIp?: string) => ViewerRun {
  if (!code.startsWith(`${CLOUDFRONT_IMPORT}\n`)) throw new Error(`the viewer function does not start with ${CLOUDFRONT_IMPORT}`);
  const body = code.slice(CLOUDFRONT_IMPORT.length);
  return (request, viewerIp = '198.51.100.7') => {
    const selected: string[] = [];
    const cloudfront = {
      selectRequestOriginById(id: string) {
        if (!origins.includes(id)) throw new Error(`No origin with id ${id} in the distribution`);
        selected.push(id);
      },
    };
    const context = createContext({ __cloudfront: cloudfront });
    new Script(`var cf = __cloudfront;${body}\n;globalThis.__handler = handler;`).runInContext(context, { timeout: 1000 });
    const handler = (context as { __handler: (event: unknown) => unknown }).__handler;
    const result = handler({
      version: '1.0',
      context: { eventType: 'viewer-request' },
      viewer: { ip: viewerIp },
      request: JSON.parse(JSON.stringify(request)),
    });
    return { result, selected };
  };
}
