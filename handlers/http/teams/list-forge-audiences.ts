import { listForgeAudiences } from '../../../lib/git/forge-audiences.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';

export const handler = defineHandler('GET /api/v1/team/forge-audiences', {}, async ({ team }) => ({
  data: { audiences: await listForgeAudiences(team!.team.id) },
}));
