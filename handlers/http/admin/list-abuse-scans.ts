import * as z from '../../../lib/schema.ts';
import { listAbuseScans, REVIEW_STATUSES } from '../../../lib/abuse/scans.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { pageOf, pageQueryFields } from '../../../lib/http/page-query.ts';

const query = z.object({
  review_status: z.optional(z.enum(REVIEW_STATUSES)),
  ...pageQueryFields,
});

export const handler = defineHandler('GET /api/v1/admin/abuse-scans', { query }, async ({ query }) => {
  return { data: await listAbuseScans({ reviewStatus: query.review_status ?? 'new', ...pageOf(query) }) };
});
