import { defineHandler } from '../../../lib/http/pipeline.ts';
import { teamMembers } from '../../../lib/teams/members.ts';

export const handler = defineHandler('GET /api/v1/team/members', {}, async ({ team }) => ({ data: await teamMembers(team!.team.id) }));
