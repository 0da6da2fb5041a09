import { defineHandler } from '../../../lib/http/pipeline.ts';
import { teamsOfUser } from '../../../lib/identity/me.ts';

export const handler = defineHandler('GET /api/v1/me/teams', {}, async ({ principal }) => ({ data: await teamsOfUser(principal!.user!) }));
