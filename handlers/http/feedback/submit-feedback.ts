import { FEEDBACK_TYPES, submitFeedback } from '../../../lib/attention/feedback.ts';
import * as z from '../../../lib/schema.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';

const body = z.strictObject({
  // Any length the request size allows: a message over the cap is cut and marked `truncated` (lib/attention/feedback.ts).
  message: z.string().check(z.refine((m) => m.trim().length > 0, { message: 'The message must not be blank.' })),
  type: z.optional(z.enum(FEEDBACK_TYPES)),
  page_route: z.nullish(z.string().check(z.maxLength(2048), z.startsWith('/'))),
  app_version: z.nullish(z.string().check(z.maxLength(64))),
  viewport: z.nullish(z.string().check(z.regex(/^\d{1,5}x\d{1,5}$/))),
});

/** Longest User-Agent kept with a feedback. */
const USER_AGENT_MAX = 512;

export const handler = defineHandler('POST /api/v1/feedback', { body }, async ({ body, principal, team, headers }) => {
  const receipt = await submitFeedback({
    teamId: team!.team.id,
    userId: principal!.user!.user_id,
    userEmail: principal!.user!.email,
    message: body.message,
    type: body.type ?? 'general',
    pageRoute: body.page_route ?? null,
    appVersion: body.app_version ?? null,
    userAgent: headers['user-agent']?.slice(0, USER_AGENT_MAX) ?? null,
    viewport: body.viewport ?? null,
  });
  return { status: 201, data: receipt };
});
