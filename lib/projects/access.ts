import type { Principal, TeamAccess } from '../http/authorize.ts';
import { ApiError, isApiError, type ErrorEntry } from '../errors/api-error.ts';
import { PROJECT_NOT_FOUND } from '../errors/catalogue.ts';
import { getMembership } from '../teams/memberships.ts';
import { UUID_PATTERN } from '../teams/slug.ts';
import { getProjectItem } from './projects.ts';

interface ResourceContext {
  principal: Principal | null;
  authorizeTeam(idOrSlug: string): Promise<TeamAccess>;
}

/**
 * Applies the route's team rule to the team owning a project or upload.
 * Someone outside that team gets the resource's 404, as if it did not exist:
 * ids are not to be probed across teams (and promote's spec lists 400 and 404
 * only). A member whose role is below the rule gets 403.
 */
export async function authorizeResourceTeam(ctx: ResourceContext, teamId: string, notFound: ErrorEntry): Promise<TeamAccess> {
  try {
    return await ctx.authorizeTeam(teamId);
  } catch (error) {
    if (!isApiError(error) || (error.code !== 'FORBIDDEN' && error.code !== 'TEAM_NOT_FOUND')) throw error;
    const principal = ctx.principal!;
    const member =
      principal.kind === 'api_key'
        ? principal.credential.team_id === teamId
        : (await getMembership(teamId, principal.user!.user_id)) !== null;
    if (!member) throw new ApiError(notFound);
    throw error;
  }
}

/** The project a path names, once the caller passed the route's rule on its team. */
export async function loadProjectForCaller(
  ctx: ResourceContext,
  projectId: string,
): Promise<{ item: Record<string, unknown>; access: TeamAccess }> {
  if (!UUID_PATTERN.test(projectId)) throw new ApiError(PROJECT_NOT_FOUND);
  const item = await getProjectItem(projectId.toLowerCase(), true);
  if (!item) throw new ApiError(PROJECT_NOT_FOUND);
  const access = await authorizeResourceTeam(ctx, item.team_id as string, PROJECT_NOT_FOUND);
  return { item, access };
}
