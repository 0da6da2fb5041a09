import { config } from '../config.ts';
import { batchGetAll } from '../db/batch.ts';
import { keys } from '../db/keys.ts';
import { getProjectItem, getSubdomainHold, type ProjectItem } from '../projects/records.ts';
import { getTeamItem, type TeamItem } from '../teams/records.ts';
import { getHostnameClaim } from './hostname-claim-records.ts';
import { FUNCTION_NAME_PATTERN, functionLabel, type DeployedFunction, type FunctionRecord } from './model.ts';
import { type FunctionItem, functionUrl, getFunctionRecord, toFunctionRecord } from './records.ts';

/**
 * Which function answers at a hostname, for the HTTPS door. No caching here:
 * the door caches. Every read is consistent, so a promote or rollback (which
 * only moves `live_deployment_id`) is seen by the next look-up.
 */

/** A subdomain as a DNS label: what a hold can be stored under. */
const SUBDOMAIN_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** The DNS label of a function host `{label}.{function_domain}` (port ignored, case-folded), or null. */
export function functionHostnameLabel(hostHeader: string, functionDomain = config.functionDomain()): string | null {
  const name = hostHeader.trim().toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
  const suffix = `.${functionDomain.toLowerCase()}`;
  if (!name.endsWith(suffix)) return null;
  const label = name.slice(0, -suffix.length);
  return /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(label) ? label : null;
}

/**
 * `{name}-{subdomain}.{function_domain}` -> the hostname claim -> the project
 * (active, and its subdomain still makes that label) -> the live deployment's
 * record of that function. Null for an unknown host, name or subdomain, no live
 * deployment, or a function the live deployment does not have.
 */
export async function resolveFunctionByHostname(hostHeader: string): Promise<DeployedFunction | null> {
  const label = functionHostnameLabel(hostHeader);
  if (!label) return null;
  const claim = await getHostnameClaim(label);
  if (!claim || typeof claim.project_id !== 'string' || typeof claim.name !== 'string') return null;
  const project = await getProjectItem(claim.project_id, true);
  if (!project || project.status !== 'active') return null;
  const subdomain = project.subdomain;
  // A project whose subdomain changed no longer answers at labels made from the old one.
  if (functionLabel(claim.name, subdomain) !== label) return null;
  const live = project.live_deployment_id;
  if (!live) return null;
  const record = await getFunctionRecord(claim.project_id, live, claim.name);
  if (!record) return null;
  return { ...record, subdomain, url: functionUrl(record.name, subdomain) };
}

/** Whether the team is in the functions beta: the operator command sets `functions_enrolled_at` on the team item. */
export async function isTeamEnrolledInFunctions(teamId: string): Promise<boolean> {
  const team = await getTeamItem(teamId, true);
  return typeof team?.functions_enrolled_at === 'string' && team.functions_enrolled_at !== '';
}

/**
 * The queued door's look-up: `{subdomain}` -> the subdomain hold -> the
 * project (active, still on that subdomain) -> the live deployment's record
 * of `{name}`. Null when any step is missing, as for a host.
 */
export async function resolveFunctionBySubdomain(subdomain: string, name: string): Promise<DeployedFunction | null> {
  const sub = subdomain.trim().toLowerCase();
  if (!SUBDOMAIN_LABEL.test(sub) || !FUNCTION_NAME_PATTERN.test(name)) return null;
  const projectId = await projectOfSubdomain(sub);
  return projectId ? resolveFunctionInProject(projectId, name, sub) : null;
}

/** The project holding a subdomain (its hold), or null; a string that is no subdomain is read nowhere. */
export async function projectOfSubdomain(subdomain: string): Promise<string | null> {
  if (!SUBDOMAIN_LABEL.test(subdomain)) return null;
  const hold = await getSubdomainHold(subdomain, true);
  return typeof hold?.project_id === 'string' ? hold.project_id : null;
}

/** The live deployment's record of `name` in a project (active; on `subdomain` when given), or null. */
export async function resolveFunctionInProject(projectId: string, name: string, subdomain?: string): Promise<DeployedFunction | null> {
  return liveFunctionOf(projectId, await getProjectItem(projectId, true), name, subdomain);
}

/**
 * The live deployment's record of `name` in a project item read just now, or null. `liveRecord`: that record,
 * read together with the project (absent: the function is read here).
 */
async function liveFunctionOf(
  projectId: string,
  project: ProjectItem | null,
  name: string,
  subdomain?: string,
  liveRecord?: FunctionRecord,
): Promise<DeployedFunction | null> {
  if (!project || project.status !== 'active') return null;
  if (subdomain !== undefined && project.subdomain !== subdomain) return null;
  const live = project.live_deployment_id;
  if (!live) return null;
  const record = liveRecord ?? (await getFunctionRecord(projectId, live, name));
  if (!record) return null;
  return { ...record, subdomain: project.subdomain, url: functionUrl(record.name, project.subdomain) };
}

/**
 * What a queued run checks as it starts (the function live then, not when invoked): the live deployment's
 * record of `name` and whether the team is in the functions beta. The project and the team are one read, and
 * with them the record of the deployment the invocation was made on (`invokedDeploymentId`): still the live one,
 * as it nearly always is, it answers without a read of its own; after a promote or a rollback the live one is read.
 */
export async function resolveQueuedRun(
  projectId: string,
  teamId: string,
  name: string,
  invokedDeploymentId?: string,
): Promise<{ fn: DeployedFunction | null; enrolled: boolean }> {
  const [projectKey, teamKey] = [keys.project(projectId), keys.team(teamId)];
  const invokedKey = invokedDeploymentId === undefined ? null : keys.function(projectId, invokedDeploymentId, name);
  const items = await batchGetAll<ProjectItem | TeamItem | FunctionItem>(
    invokedKey ? [projectKey, teamKey, invokedKey] : [projectKey, teamKey],
    undefined,
    true,
  );
  const find = (key: { pk: string; sk: string }) => items.find((item) => item.pk === key.pk && item.sk === key.sk) ?? null;
  const [project, team] = [find(projectKey) as ProjectItem | null, find(teamKey) as TeamItem | null];
  const enrolled = typeof team?.functions_enrolled_at === 'string' && team.functions_enrolled_at !== '';
  if (!enrolled) return { fn: null, enrolled };
  const invoked = invokedKey && project?.live_deployment_id === invokedDeploymentId ? find(invokedKey) : null;
  return {
    fn: await liveFunctionOf(projectId, project, name, undefined, invoked ? toFunctionRecord(invoked as FunctionItem) : undefined),
    enrolled,
  };
}
