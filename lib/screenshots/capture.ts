import { existsSync } from 'node:fs';
import { chromium, type BrowserContext, type LaunchOptions } from 'playwright-core';
import type { CaptureMessage } from './jobs.ts';
import { config } from '../config.ts';

/**
 * The capture of one job: headless Chromium, driven by playwright-core, opens
 * the job's page, takes a PNG and reports it (or why there is none) through
 * `PUT /api/v1/public/screenshots/jobs/{job_id}` with the job's token. The
 * same code runs in the local platform's capture driver and in the cloud
 * capture worker's container image (handlers/workers/screenshots-capture.ts);
 * only the Chromium build differs (`SCREENSHOT_CHROMIUM`).
 */

export const CAPTURE_VIEWPORT = { width: 1280, height: 800 } as const;
/** How long a page may take to load (SCREENSHOT_PAGE_TIMEOUT_MS), read at each capture. */
const pageTimeoutMs = () => config.screenshotPageTimeoutMs();

/**
 * Which Chromium: `system` (the default) is a binary on this machine,
 * `serverless` the build `@sparticuz/chromium` carries for Lambda, which the
 * capture worker's image sets (lib/screenshots/image/Dockerfile).
 */
export type ChromiumBuild = 'system' | 'serverless';

export const chromiumBuild = (): ChromiumBuild => config.screenshotChromium();

/** The system Chromium binary: `CHROMIUM_PATH`, else Debian's. Null when there is none (local captures are then off). */
export function chromiumPath(): string | null {
  const path = config.chromiumPath();
  return existsSync(path) ? path : null;
}

/**
 * Flags of @sparticuz/chromium's list that a screenshot has no use for and
 * that would let a page reach further: pages are anyone's published sites.
 */
const UNWANTED_SERVERLESS_FLAGS = new Set(['--disable-web-security', '--allow-running-insecure-content']);

/**
 * How the platform launches this machine's Chromium (the capture driver, and
 * the console's browser tests and bench): --no-sandbox, since Chromium's own
 * sandbox needs user namespaces it cannot set up as root in a container; no
 * background networking, component updates or sync, which a closed network
 * refuses at every start.
 */
export function systemChromiumLaunchOptions(): LaunchOptions {
  const executablePath = chromiumPath();
  if (!executablePath) throw new Error('no Chromium binary (set CHROMIUM_PATH)');
  return {
    executablePath,
    args: [
      '--no-sandbox',
      '--disable-dev-shm-usage',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  };
}

async function launchOptions(): Promise<LaunchOptions> {
  if (chromiumBuild() === 'serverless') {
    // Imported only here: on load it points LD_LIBRARY_PATH and the font path at what it unpacks into /tmp on Lambda.
    const { default: serverless } = await import('@sparticuz/chromium');
    // Its own list: --single-process and --no-zygote, which Lambda's sandboxless environment needs, --no-sandbox among them.
    return {
      executablePath: await serverless.executablePath(),
      args: serverless.args.filter((flag) => !UNWANTED_SERVERLESS_FLAGS.has(flag)),
    };
  }
  return systemChromiumLaunchOptions();
}

/**
 * On Lambda the runtime API (`AWS_LAMBDA_RUNTIME_API`, a loopback address)
 * hands out invocations and takes their results: a page, which is anyone's
 * site, must not reach it. Matched by port, whatever name or address the page
 * uses for loopback (localhost, 127.1, a name resolving there).
 */
async function shutOutRuntimeApi(context: BrowserContext): Promise<void> {
  const runtimeApi = config.lambdaRuntimeApi();
  if (!runtimeApi) return;
  const address = new URL(`http://${runtimeApi}`);
  // Lambda's is 127.0.0.1:9001; without a port, the address itself.
  const toRuntimePort = address.port ? (url: URL) => url.port === address.port : (url: URL) => url.host === address.host;
  await context.route(toRuntimePort, (route) => route.abort('blockedbyclient'));
  // Unconnected: the page's socket never reaches the server.
  await context.routeWebSocket(toRuntimePort, (socket) => socket.close());
}

/** Captures one job's page and reports the result; resolves with the status the report got. */
export async function captureJob(message: CaptureMessage, apiBaseUrl: string): Promise<number> {
  const browser = await chromium.launch(await launchOptions());
  let report: { body: Buffer | string; type: string; httpStatus: number | null };
  try {
    // A service worker's requests would pass by the route below; a screenshot needs none.
    const page = await browser.newPage({ viewport: CAPTURE_VIEWPORT, serviceWorkers: 'block' });
    await shutOutRuntimeApi(page.context());
    try {
      const response = await page.goto(message.url, { timeout: pageTimeoutMs(), waitUntil: 'load' });
      const png = await page.screenshot({ type: 'png' });
      report = { body: png, type: 'image/png', httpStatus: response?.status() ?? null };
    } catch (error) {
      const timedOut = (error as Error).name === 'TimeoutError';
      report = {
        body: JSON.stringify({ error: timedOut ? 'timeout' : 'unreachable', http_status: 0 }),
        type: 'application/json',
        httpStatus: null,
      };
    }
  } finally {
    await browser.close();
  }
  const headers: Record<string, string> = { authorization: `Bearer ${message.token}`, 'content-type': report.type };
  if (report.httpStatus !== null) headers['x-capture-http-status'] = String(report.httpStatus);
  const res = await fetch(new URL(message.upload_path, apiBaseUrl), { method: 'PUT', headers, body: report.body });
  await res.body?.cancel();
  return res.status;
}
