import { defineHandler } from '../../../lib/http/pipeline.ts';
import { teamProfile } from '../../../lib/teams/teams.ts';

export const handler = defineHandler('GET /api/v1/team/profile', {}, async ({ team }) => ({
  data: teamProfile(team!.team),
}));
