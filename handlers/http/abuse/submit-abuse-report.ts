import { randomUUID } from 'node:crypto';
import {
  ABUSE_CATEGORIES,
  ANONYMOUS_CATEGORY,
  MAX_DESCRIPTION_LENGTH,
  MAX_REPORTED_URLS,
  MAX_URL_LENGTH,
  honeypotFilled,
  submitAbuseReport,
} from '../../../lib/abuse/reports.ts';
import { config } from '../../../lib/config.ts';
import { ApiError } from '../../../lib/errors/api-error.ts';
import { ABUSE_INTAKE_UNAVAILABLE, ABUSE_REPORT_INVALID } from '../../../lib/errors/catalogue/admin.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import * as z from '../../../lib/schema.ts';

const optionalText = (max: number) => z.optional(z.nullable(z.string().check(z.trim(), z.maxLength(max))));

const body = z
  .strictObject({
    _hp: z.optional(z.nullable(z.string())),
    category: z.enum(ABUSE_CATEGORIES),
    description: z.string().check(z.trim(), z.minLength(1), z.maxLength(MAX_DESCRIPTION_LENGTH)),
    reported_urls: z
      .array(z.string().check(z.trim(), z.minLength(1), z.maxLength(MAX_URL_LENGTH)))
      .check(z.minLength(1), z.maxLength(MAX_REPORTED_URLS)),
    reporter_name: optionalText(200),
    reporter_email: z.optional(z.nullable(z.union([z.literal(''), z.email().check(z.maxLength(254))]))),
    good_faith_declared: z.literal(true, {
      error: 'good_faith_declared must be true: the reporter states the report is accurate and made in good faith.',
    }),
  })
  .check(
    z.superRefine((report, ctx) => {
      // DSA Article 16(2)(c): name and e-mail address, except for the offences of Directive 2011/93/EU.
      if (report.category === ANONYMOUS_CATEGORY) return;
      if (!report.reporter_name?.trim()) {
        ctx.issues.push({
          code: 'custom',
          input: report.reporter_name,
          path: ['reporter_name'],
          message: `reporter_name is required except for category ${ANONYMOUS_CATEGORY}.`,
        });
      }
      if (!report.reporter_email?.trim()) {
        ctx.issues.push({
          code: 'custom',
          input: report.reporter_email,
          path: ['reporter_email'],
          message: `reporter_email is required except for category ${ANONYMOUS_CATEGORY}.`,
        });
      }
    }),
  );

export const handler = defineHandler(
  'POST /api/v1/public/abuse-reports',
  {
    body,
    maxJsonBytes: 64 * 1024,
    validationError: ABUSE_REPORT_INVALID,
    beforeValidation: (parsed) => {
      // A filled honeypot is a bot: the same reply a recorded report gets, and nothing is recorded, counted or mailed.
      if (honeypotFilled(parsed)) return { status: 201, data: { id: randomUUID() } };
      if (!config.abuseIntakeEnabled()) throw new ApiError(ABUSE_INTAKE_UNAVAILABLE);
      return undefined;
    },
  },
  async ({ body, sourceIp, log }) => {
    const { _hp: _honeypot, ...report } = body;
    return { status: 201, data: await submitAbuseReport(report, sourceIp, log) };
  },
);
