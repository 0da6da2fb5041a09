import { defineHandler } from '../../../lib/http/pipeline.ts';
import { teamProfile } from '../../../lib/teams/teams.ts';

export const handler = defineHandler('GET /api/v1/teams/{team}/profile', {}, async ({ params, authorizeTeam, baseUrl }) => {
  const { team, retiredSlug } = await authorizeTeam(params.team!);
  // A slug the team renamed away from answers for 30 days, pointing at the current one.
  const headers: Record<string, string> = retiredSlug
    ? {
        deprecation: 'true',
        link: `<${baseUrl}/api/v1/teams/${encodeURIComponent(team.slug)}/profile>; rel="canonical"`,
      }
    : {};
  return { data: teamProfile(team), headers };
});
