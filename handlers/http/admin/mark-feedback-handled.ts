import { markFeedbackHandled } from '../../../lib/attention/feedback.ts';
import { ApiError } from '../../../lib/errors/api-error.ts';
import { FEEDBACK_NOT_FOUND } from '../../../lib/errors/catalogue/admin.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { UUID_PATTERN } from '../../../lib/teams/slug.ts';

// Takes the feedback out of the inbox of GET /api/v1/admin/attention; the first mark stands.
export const handler = defineHandler('POST /api/v1/admin/feedback/{id}/handled', {}, async ({ params, principal }) => {
  if (!UUID_PATTERN.test(params.id!)) throw new ApiError(FEEDBACK_NOT_FOUND);
  return { data: await markFeedbackHandled(params.id!.toLowerCase(), principal!.user!.user_id) };
});
