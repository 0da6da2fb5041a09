import { forgeAudienceValue, registerForgeAudience } from '../../../lib/git/forge-audiences.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import * as z from '../../../lib/schema.ts';

const body = z.strictObject({ audience: forgeAudienceValue });

// 201 when the team claims it now, 200 when it held it already; another team's: 409 FORGE_AUDIENCE_TAKEN.
export const handler = defineHandler('POST /api/v1/team/forge-audiences', { body }, async ({ team, principal, body }) => {
  const { created, audience } = await registerForgeAudience(team!.team.id, body.audience, principal?.user?.user_id ?? null);
  return { status: created ? 201 : 200, data: audience };
});
