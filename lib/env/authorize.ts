import type { Principal, TeamAccess } from '../identity/principal.ts';
import { loadProjectForCaller } from '../projects/access.ts';

export interface EnvProject {
  id: string;
  team_id: string;
}

/**
 * The project an environment variable request addresses, through the Sites
 * part's own loader so every project endpoint answers alike: 404
 * PROJECT_NOT_FOUND for an unknown project and for one of a team the caller is
 * not in (ids are not probed across teams; the spec lists 404, not 403, for
 * this endpoint), 403 for a team member below the route's role.
 */
export async function authorizeEnvProject(
  ctx: { principal: Principal | null; authorizeTeam(idOrSlug: string): Promise<TeamAccess> },
  projectId: string,
): Promise<{ project: EnvProject; access: TeamAccess }> {
  const { item, access } = await loadProjectForCaller(ctx, projectId);
  return { project: { id: item.id, team_id: item.team_id }, access };
}

/** Who wrote a variable: the user, or the API key (which names no person). */
export const writerOf = (principal: Principal | null) => (principal?.user ? `user:${principal.user.user_id}` : 'api_key');
