import { ApiError } from '../../../lib/errors/api-error.ts';
import { API_KEY_NOT_FOUND } from '../../../lib/errors/catalogue/accounts.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { revokeApiKey } from '../../../lib/identity/credential-records.ts';

export const handler = defineHandler('DELETE /api/v1/team/api-keys/{id}', {}, async ({ team, params }) => {
  const key = await revokeApiKey(team!.team.id, params.id!.toLowerCase());
  if (!key) throw new ApiError(API_KEY_NOT_FOUND);
  return { data: key };
});
