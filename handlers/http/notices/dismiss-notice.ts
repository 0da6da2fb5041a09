import { defineHandler } from '../../../lib/http/pipeline.ts';
import { dismissNotice } from '../../../lib/notices/notices.ts';

export const handler = defineHandler('POST /api/v1/notices/{key}/dismiss', {}, async ({ principal, team, params }) => {
  const key = params.key ?? '';
  const dismissedAt = await dismissNotice(principal!.user!.user_id, team!.team.id, team!.role, key);
  return { data: { message: 'Notice dismissed', key, team_id: team!.team.id, dismissed_at: dismissedAt } };
});
