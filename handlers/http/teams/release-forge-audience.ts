import { forgeAudienceValue, releaseForgeAudience } from '../../../lib/git/forge-audiences.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import * as z from '../../../lib/schema.ts';

const body = z.strictObject({ audience: forgeAudienceValue });

// Not the team's (never registered, released, another team's): 404 FORGE_AUDIENCE_NOT_FOUND.
export const handler = defineHandler('DELETE /api/v1/team/forge-audiences', { body }, async ({ team, body }) => ({
  data: await releaseForgeAudience(team!.team.id, body.audience),
}));
