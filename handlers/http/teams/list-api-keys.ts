import { defineHandler } from '../../../lib/http/pipeline.ts';
import { listApiKeys } from '../../../lib/identity/credential-records.ts';

export const handler = defineHandler('GET /api/v1/team/api-keys', {}, async ({ team }) => ({ data: await listApiKeys(team!.team.id) }));
