import { ApiError } from '../errors/api-error.ts';
import { GIT_WEBHOOK_SIGNATURE_INVALID } from '../errors/catalogue/builds.ts';
import { getTeam } from '../teams/teams.ts';
import { forgetBuiltCommits } from './build-records.ts';
import { deleteDelivery, recordDelivery, type GitProvider } from './delivery-records.ts';
import { enqueueBuild, recordSkipped, type QueuedBuildView } from './enqueue.ts';
import type { GitEvent } from './events.ts';
import { openWebhookSecret } from '../git/git-secrets.ts';
import { takeDownPreview } from '../sites/preview-records.ts';
import { markProductionBranchDeleted, notePush, projectsForRepo } from './project-git-records.ts';
import { repoKey } from '../git/repo-url.ts';
import { decide, productionBranch, type ProjectRules } from './rules.ts';
import type { ProjectItem } from '../projects/records.ts';

/**
 * A Git webhook delivery (docs/builds.md): the projects its repository names
 * are found by the repository index; the delivery must come by the route of
 * the project's forge and match the project's current secret to act on it
 * (no match at all: 401, nothing recorded); it is recorded once by its
 * delivery id; then each matching project's rules decide what it builds, and
 * a commit already queued for the same branch in the last 24 hours (a
 * replayed delivery, under a new id) builds nothing.
 */
export interface Delivery {
  provider: GitProvider;
  eventType: string;
  deliveryId: string;
  event: GitEvent;
  /** Whether the delivery is authentic under one project's secret. */
  verify: (secret: string) => boolean;
}

export interface IgnoredEntry {
  project_id: string | null;
  reason: string;
}

export interface IntakeResult {
  delivery_id: string;
  event: string;
  duplicate: boolean;
  builds: QueuedBuildView[];
  ignored: IgnoredEntry[];
}

/** Hosts whose forge is known by name, when `git_provider` does not say. */
const FORGE_HOSTS: Record<string, GitProvider> = { 'github.com': 'github', 'www.github.com': 'github', 'gitlab.com': 'gitlab' };

/**
 * The forge a project is connected to, whose route alone may deliver to it: `git_provider` when it
 * names GitHub or GitLab (any case), else the repository's host when it is github.com or gitlab.com,
 * else null (either route, each with its own check of the one secret).
 */
export function projectForge(project: ProjectItem): GitProvider | null {
  const named = typeof project.git_provider === 'string' ? project.git_provider.trim().toLowerCase() : '';
  if (named === 'github' || named === 'gitlab') return named;
  const key = repoKey(project.git_repo_url);
  return key ? (FORGE_HOSTS[key.slice(0, key.indexOf('/'))] ?? null) : null;
}

async function matchingProjects(delivery: Delivery): Promise<ProjectItem[]> {
  const repoKeys = [...new Set(delivery.event.repoUrls.map(repoKey).filter((k): k is string => k !== null))];
  const found = new Map<string, ProjectItem>();
  for (const key of repoKeys) for (const project of await projectsForRepo(key)) found.set(project.id, project);
  return [...found.values()].filter((project) => {
    // A GitHub project's secret is never tried as a GitLab token, nor a GitLab project's as a GitHub key.
    const forge = projectForge(project);
    if (forge !== null && forge !== delivery.provider) return false;
    const sealed = project.git_webhook_secret_sealed;
    return typeof sealed === 'string' && delivery.verify(openWebhookSecret(project.id, sealed));
  });
}

export async function receiveDelivery(delivery: Delivery): Promise<IntakeResult> {
  const projects = await matchingProjects(delivery);
  if (projects.length === 0) throw new ApiError(GIT_WEBHOOK_SIGNATURE_INVALID);
  const result: IntakeResult = { delivery_id: delivery.deliveryId, event: delivery.eventType, duplicate: false, builds: [], ignored: [] };
  const first = await recordDelivery({
    provider: delivery.provider,
    deliveryId: delivery.deliveryId,
    eventType: delivery.eventType,
    projectIds: projects.map((p) => p.id),
  });
  if (!first) return { ...result, duplicate: true, ignored: [{ project_id: null, reason: 'duplicate_delivery' }] };
  try {
    for (const project of projects) await actOnProject(project, delivery.event, result);
  } catch (error) {
    // Nothing is lost: the forge's retry of this delivery is processed afresh.
    await deleteDelivery(delivery.provider, delivery.deliveryId).catch(() => undefined);
    throw error;
  }
  return result;
}

async function actOnProject(project: ProjectItem, event: GitEvent, result: IntakeResult): Promise<void> {
  const projectId = project.id;
  if (event.kind === 'push' && event.branch !== null) {
    const production = productionBranch(project as unknown as ProjectRules, event.repoDefaultBranch) === event.branch;
    await notePush(projectId, { repoDefaultBranch: event.repoDefaultBranch, productionBranchPushed: production && !event.deleted });
  }
  const team = await getTeam(project.team_id);
  if (!team || (team as { suspended_at?: unknown }).suspended_at) {
    result.ignored.push({ project_id: projectId, reason: 'team_suspended' });
    return;
  }
  const decision = decide(project as unknown as ProjectRules, event);
  if (decision.action === 'ignore') return void result.ignored.push({ project_id: projectId, reason: decision.reason });
  if (decision.action === 'production_branch_deleted' || decision.action === 'take_down_preview') {
    if (decision.action === 'production_branch_deleted') await markProductionBranchDeleted(projectId);
    await takeDownPreview(projectId, decision.label);
    // A preview's branch (or request) may come back at the same commit: that delivery builds it again. The
    // production branch's marks stay: its live deployment is untouched, and a replayed deletion must not
    // open the way to replaying an older push.
    if (decision.action === 'take_down_preview')
      await forgetBuiltCommits(
        projectId,
        event.kind === 'merge_request' ? `mr:${event.number}` : `branch:${(event as { branch: string }).branch}`,
      );
    result.ignored.push({
      project_id: projectId,
      reason: decision.action === 'production_branch_deleted' ? 'production_branch_deleted' : 'preview_taken_down',
    });
    return;
  }
  if (event.kind === 'other') return;
  const request = {
    project,
    trigger: decision.trigger,
    target: decision.target,
    branch: event.branch!,
    commitSha: event.commitSha,
    commitMessage: event.commitMessage,
    label: decision.label,
    mergeRequest: event.kind === 'merge_request' ? event.number : null,
  };
  if (decision.action === 'skip') return void result.builds.push(await recordSkipped(request, decision.reason));
  const queued = await enqueueBuild(request, { oncePer24h: true });
  if (queued) result.builds.push(queued);
  else result.ignored.push({ project_id: projectId, reason: 'already_built' });
}
