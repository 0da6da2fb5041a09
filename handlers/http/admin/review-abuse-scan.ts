import * as z from '../../../lib/schema.ts';
import { reviewAbuseScan } from '../../../lib/abuse/scans.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';

const body = z.strictObject({
  review_status: z.enum(['dismissed', 'actioned']),
  resolution: z.optional(z.nullable(z.string().check(z.maxLength(1000)))),
});

export const handler = defineHandler('POST /api/v1/admin/abuse-scans/{id}/review', { body }, async ({ params, principal, body }) => {
  // Platform administrators are users (an API key is refused by the route's rule): handled_by names the person.
  return { data: await reviewAbuseScan(params.id!, body, principal!.user!.user_id) };
});
