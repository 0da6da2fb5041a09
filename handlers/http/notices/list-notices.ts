import { defineHandler } from '../../../lib/http/pipeline.ts';
import { listVisibleNotices } from '../../../lib/notices/notices.ts';

export const handler = defineHandler('GET /api/v1/notices', {}, async ({ principal, team }) => {
  return { data: await listVisibleNotices(principal!.user!.user_id, team!.team.id, team!.role) };
});
