import { SendEmailCommand } from '@aws-sdk/client-sesv2';
import { randomUUID } from 'node:crypto';
import { ses } from '../aws/ses.ts';
import { config } from '../config.ts';
import { ApiError } from '../errors/api-error.ts';
import { ABUSE_INTAKE_UNAVAILABLE, ABUSE_REPORT_NOT_RECORDED, ABUSE_REPORT_URL_NOT_HOSTED } from '../errors/catalogue/admin.ts';
import type { RequestLogger } from '../logger.ts';
import { resolveReportedUrl, type HostedTarget } from './hosts.ts';
import { takeAbuseReportAllowance } from './limits.ts';
import { refreshReportCount } from './scan-records.ts';
import { insertReport, writeReceiptStatus } from './report-records.ts';
import type { AbuseCategory } from './categories.ts';

/**
 * Abuse intake (spec endpoint 3): a notice-and-action mechanism built to
 * Article 16 of the EU Digital Services Act. A notice holds (16(2)) the
 * reasons (`description`), the exact electronic location of the content
 * (`reported_urls`), the notifier's name and e-mail address, except for the
 * offences of Articles 3 to 7 of Directive 2011/93/EU (the
 * `child_sexual_abuse` category), and a statement of good faith; the notifier
 * gets a confirmation of receipt without undue delay (16(4)). Layout and
 * rules: docs/trust-and-safety.md.
 */

export { ABUSE_CATEGORIES, type AbuseCategory } from './categories.ts';

/** The category whose reporter may stay anonymous (DSA Article 16(2)(c)). */
export const ANONYMOUS_CATEGORY: AbuseCategory = 'child_sexual_abuse';

/** One report names at most this many URLs: a list longer than that is several reports' worth. */
export const MAX_REPORTED_URLS = 20;
export const MAX_URL_LENGTH = 2048;
export const MAX_DESCRIPTION_LENGTH = 10_000;

export interface AbuseReportInput {
  category: AbuseCategory;
  description: string;
  reported_urls: string[];
  reporter_name?: string | null;
  reporter_email?: string | null;
  good_faith_declared: true;
}

/** Whether the honeypot field was filled: anything but absent, null or the empty string a browser leaves. */
export function honeypotFilled(body: unknown): boolean {
  if (!body || typeof body !== 'object' || Array.isArray(body) || !('_hp' in body)) return false;
  const value = (body as { _hp: unknown })._hp;
  return value !== undefined && value !== null && value !== '';
}

/** An empty string is as good as absent for the optional reporter fields. */
const present = (value: string | null | undefined): string | null => {
  const trimmed = value?.trim();
  return trimmed ? trimmed : null;
};

/** Every reported URL on a hosted site, function or verified custom domain; 422 ABUSE_REPORT_URL_NOT_HOSTED lists the others. */
async function resolveTargets(urls: string[]): Promise<HostedTarget[]> {
  const unique = [...new Set(urls.map((u) => u.trim()))];
  const targets = await Promise.all(unique.map((url) => resolveReportedUrl(url)));
  const notHosted = unique.filter((_url, i) => targets[i] === null);
  if (notHosted.length > 0) throw new ApiError(ABUSE_REPORT_URL_NOT_HOSTED, { details: { urls: notHosted } });
  return targets as HostedTarget[];
}

function receiptMail(report: { id: string; category: string; reported_urls: string[]; created_at: string; reporter_name: string | null }) {
  const text = [
    `Hello${report.reporter_name ? ` ${report.reporter_name}` : ''},`,
    '',
    'We received your report of illegal or abusive content on Slipway and will review it.',
    '',
    `Reference: ${report.id}`,
    `Received: ${report.created_at}`,
    `Category: ${report.category}`,
    'Reported addresses:',
    ...report.reported_urls.map((url) => `  ${url}`),
    '',
    'We will let you know what we decide. This confirmation was sent because this address was given in the report;',
    'if you did not send it, you can ignore this message.',
  ].join('\n');
  return { subject: `We received your abuse report (${report.id})`, text };
}

/**
 * Mails the confirmation of receipt. The report is already recorded, so a
 * failed send does not undo it: it is logged and marked on the report
 * (`receipt_status`), where the reviewers see it.
 */
async function sendReceipt(report: Parameters<typeof receiptMail>[0] & { reporter_email: string }, log: RequestLogger): Promise<void> {
  const mail = receiptMail(report);
  let status: 'sent' | 'failed' = 'sent';
  try {
    await ses().send(
      new SendEmailCommand({
        FromEmailAddress: config.mailFrom(),
        Destination: { ToAddresses: [report.reporter_email] },
        Content: { Simple: { Subject: { Data: mail.subject }, Body: { Text: { Data: mail.text } } } },
      }),
    );
  } catch (error) {
    status = 'failed';
    log.error('abuse report receipt not sent', { report_id: report.id, error: (error as Error).name });
  }
  try {
    await writeReceiptStatus(report.id, status);
  } catch (error) {
    log.warn('abuse report receipt status not written', { report_id: report.id, error: (error as Error).name });
  }
}

/**
 * Records an abuse report: the URLs checked against the hosts the platform
 * serves (read from the table, never fetched), one report from each allowance
 * taken, then the report and one item per named project written in one
 * transaction, then the receipt mailed. A report that could not be written
 * gives its allowance back and answers 503 ABUSE_REPORT_NOT_RECORDED.
 */
export async function submitAbuseReport(input: AbuseReportInput, sourceIp: string, log: RequestLogger): Promise<{ id: string }> {
  if (!config.abuseIntakeEnabled()) throw new ApiError(ABUSE_INTAKE_UNAVAILABLE);
  const reporterName = present(input.reporter_name);
  const reporterEmail = present(input.reporter_email)?.toLowerCase() ?? null;

  let targets: HostedTarget[];
  try {
    targets = await resolveTargets(input.reported_urls);
  } catch (error) {
    if (error instanceof ApiError) throw error;
    log.error('abuse report hosts not checked', { error: (error as Error).name });
    throw new ApiError(ABUSE_REPORT_NOT_RECORDED);
  }

  let giveBack: () => Promise<void>;
  try {
    giveBack = await takeAbuseReportAllowance(sourceIp, reporterEmail);
  } catch (error) {
    if (error instanceof ApiError) throw error;
    log.error('abuse report allowance not taken', { error: (error as Error).name });
    throw new ApiError(ABUSE_REPORT_NOT_RECORDED);
  }

  const id = randomUUID();
  const createdAt = new Date().toISOString();
  const projectIds = [...new Set(targets.map((t) => t.project_id))];
  try {
    await insertReport({
      id,
      category: input.category,
      description: input.description,
      targets,
      projectIds,
      reporterName,
      reporterEmail,
      createdAt,
    });
  } catch (error) {
    log.error('abuse report not recorded', { error: (error as Error).name });
    await giveBack().catch(() => undefined);
    throw new ApiError(ABUSE_REPORT_NOT_RECORDED);
  }

  // The listed keyword scans of the named projects count this report and move to the reported group (lib/abuse/scans.ts).
  for (const projectId of projectIds) {
    await refreshReportCount(projectId).catch((error: unknown) =>
      log.warn('abuse scan report count not refreshed', { project_id: projectId, error: (error as Error).name }),
    );
  }

  if (reporterEmail) {
    await sendReceipt(
      {
        id,
        category: input.category,
        reported_urls: targets.map((t) => t.url),
        created_at: createdAt,
        reporter_name: reporterName,
        reporter_email: reporterEmail,
      },
      log,
    );
  }
  return { id };
}
