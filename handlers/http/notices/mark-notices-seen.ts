import * as z from '../../../lib/schema.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { markNoticesSeen } from '../../../lib/notices/notices.ts';

const body = z.strictObject({ seen_at: z.iso.datetime({ offset: true }) });

export const handler = defineHandler('POST /api/v1/notices/seen', { body }, async ({ principal, body }) => {
  const seenAt = await markNoticesSeen(principal!.user!.user_id, new Date(body.seen_at));
  return { data: { message: 'Watermark updated', seen_at: seenAt } };
});
