import { defineHandler } from '../../../lib/http/pipeline.ts';
import { listPendingDeletions } from '../../../lib/lifecycle/team-deletion.ts';

export const handler = defineHandler('GET /api/v1/admin/deletions', {}, async () => {
  return { data: { deletions: await listPendingDeletions() } };
});
