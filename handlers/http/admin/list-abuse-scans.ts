import * as z from '../../../lib/http/schema.ts';
import { listAbuseScans, PAGE_SIZE_DEFAULT, REVIEW_STATUSES } from '../../../lib/abuse/scans.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';

// Query values arrive as strings: the patterns bound them (page >= 1, page_size 1 to 100) before they are numbers.
const query = z.object({
  review_status: z.optional(z.enum(REVIEW_STATUSES)),
  page: z.optional(z.string().check(z.regex(/^[1-9][0-9]{0,5}$/, 'page must be an integer from 1 to 999999'))),
  page_size: z.optional(z.string().check(z.regex(/^(?:100|[1-9][0-9]?)$/, 'page_size must be an integer from 1 to 100'))),
});

export const handler = defineHandler('GET /api/v1/admin/abuse-scans', { query }, async ({ query }) => {
  return {
    data: await listAbuseScans({
      reviewStatus: query.review_status ?? 'new',
      page: query.page ? Number(query.page) : 1,
      pageSize: query.page_size ? Number(query.page_size) : PAGE_SIZE_DEFAULT,
    }),
  };
});
