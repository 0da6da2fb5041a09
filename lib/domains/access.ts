import type { Principal, TeamAccess } from '../identity/principal.ts';
import { ApiError } from '../errors/api-error.ts';
import { DOMAIN_NOT_FOUND } from '../errors/catalogue/domains.ts';
import { authorizeResourceTeam } from '../identity/resource-access.ts';
import { UUID_PATTERN } from '../teams/slug.ts';
import { getDomainItem, type DomainItem } from './records.ts';

/**
 * The domain a path names, once the caller passed the route's rule on the
 * domain's team: like projects, a domain of a team the caller is not in
 * answers 404 (ids are not probed across teams), a member below the rule 403.
 * A removed domain is gone.
 */
export async function loadDomainForCaller(
  ctx: { principal: Principal | null; authorizeTeam(idOrSlug: string): Promise<TeamAccess> },
  domainId: string,
): Promise<{ item: DomainItem; access: TeamAccess }> {
  if (!UUID_PATTERN.test(domainId)) throw new ApiError(DOMAIN_NOT_FOUND);
  const item = await getDomainItem(domainId.toLowerCase());
  if (!item || item.deleted_at) throw new ApiError(DOMAIN_NOT_FOUND);
  const access = await authorizeResourceTeam(ctx, item.team_id, DOMAIN_NOT_FOUND);
  return { item, access };
}
