import { existsSync } from 'node:fs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { chromium } from 'playwright-core';
import { logger } from '../http/logger.ts';
import type { CaptureMessage } from '../screenshots/jobs.ts';

/**
 * The local platform's screenshot capture worker: takes the page of each job
 * on the screenshots queue with headless Chromium (Debian's `chromium`, driven
 * by playwright-core) and reports through
 * `PUT /api/v1/public/screenshots/jobs/{job_id}` with the job's token, as the
 * cloud capture workers would. Pages are loopback sites of this platform.
 */

export const CAPTURE_VIEWPORT = { width: 1280, height: 800 } as const;
const PAGE_TIMEOUT_MS = Number(process.env.SCREENSHOT_PAGE_TIMEOUT_MS || 20_000);

/** The Chromium binary: `CHROMIUM_PATH`, else Debian's. Null when there is none (captures are then off). */
export function chromiumPath(): string | null {
  const path = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
  return existsSync(path) ? path : null;
}

/** Captures one job's page and reports the result; resolves with the status the report got. */
export async function capture(message: CaptureMessage, apiBaseUrl: string): Promise<number> {
  const executablePath = chromiumPath();
  if (!executablePath) throw new Error('no Chromium binary (set CHROMIUM_PATH)');
  // --no-sandbox: Chromium's own sandbox needs user namespaces it cannot set up as root in a container.
  const browser = await chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  let report: { body: Buffer | string; type: string; httpStatus: number | null };
  try {
    const page = await browser.newPage({ viewport: CAPTURE_VIEWPORT });
    try {
      const response = await page.goto(message.url, { timeout: PAGE_TIMEOUT_MS, waitUntil: 'load' });
      const png = await page.screenshot({ type: 'png' });
      report = { body: png, type: 'image/png', httpStatus: response?.status() ?? null };
    } catch (error) {
      const timedOut = (error as Error).name === 'TimeoutError';
      report = { body: JSON.stringify({ error: timedOut ? 'timeout' : 'unreachable', http_status: 0 }), type: 'application/json', httpStatus: null };
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

/** The queue handler (run by the local queue driver). */
export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  const apiBaseUrl = process.env.API_BASE_URL ?? '';
  for (const record of event.Records) {
    try {
      const message = JSON.parse(record.body) as CaptureMessage;
      const status = await capture(message, apiBaseUrl);
      // 401 (job expired) and 409 (already reported) are final: retrying cannot change them.
      if (status >= 500 || status === 429) throw new Error(`the result endpoint answered ${status}`);
      logger.info('screenshot captured', { job_id: message.job_id, report_status: status });
    } catch (error) {
      logger.warn('screenshot capture failed; the queue retries it', { error: String(error) });
      failures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures: failures };
};
