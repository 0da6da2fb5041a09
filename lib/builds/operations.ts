import * as z from '../schema.ts';
import { ApiError } from '../errors/api-error.ts';
import { DEPLOYMENT_NOT_FOUND, PROJECT_NOT_FOUND } from '../errors/catalogue/sites.ts';
import { BUILD_LOG_CURSOR_INVALID, GIT_REPOSITORY_NOT_CONNECTED } from '../errors/catalogue/builds.ts';
import { toProject, type Project } from '../projects/projects.ts';
import { getProjectItem, type ProjectItem } from '../projects/records.ts';
import { UUID_PATTERN } from '../teams/slug.ts';
import { resumeAutoDeploy } from './breaker-records.ts';
import { readLogLines } from './build-log-records.ts';
import { getBuild } from './build-records.ts';
import { settleIfLost } from './lost.ts';
import { enqueueBuild, type QueuedBuildView } from './enqueue.ts';
import { newWebhookSecret, sealWebhookSecret } from '../git/git-secrets.ts';
import { branchLabel } from '../sites/preview-hosts.ts';
import { storeWebhookSecret } from './project-git-records.ts';
import { productionBranch } from './rules.ts';

/** The operations of the API on builds (docs/builds.md), behind thin handlers. */

/** POST .../git/webhook-secret: a new secret, answered this once; deliveries signed with the old one stop matching. */
export async function rotateWebhookSecret(project: ProjectItem): Promise<{ secret: string }> {
  const secret = newWebhookSecret();
  if (!(await storeWebhookSecret(project.id, sealWebhookSecret(project.id, secret)))) throw new ApiError(PROJECT_NOT_FOUND);
  return { secret };
}

export const startBuildSchema = z.strictObject({
  branch: z.string().check(
    z.minLength(1),
    z.maxLength(255),
    z.refine((b) => !/[\s~^:?*[\\]|\.\.|^[-/]|\/$/.test(b), 'Not a Git branch name.'),
  ),
  commit_sha: z.optional(z.string().check(z.regex(/^[0-9a-f]{40}$|^[0-9a-f]{64}$/, 'A full commit SHA, lowercase hex.'))),
});

/**
 * POST .../builds: a build of `branch` (its head, or `commit_sha`) by hand:
 * production when it is the production branch, else a preview. No branch
 * policy and no breaker applies; a successful manual build clears the breaker.
 */
export async function startManualBuild(project: ProjectItem, body: z.infer<typeof startBuildSchema>): Promise<QueuedBuildView> {
  if (project.status !== 'active') throw new ApiError(PROJECT_NOT_FOUND);
  if (typeof project.git_repo_url !== 'string' || !project.git_repo_url) throw new ApiError(GIT_REPOSITORY_NOT_CONNECTED);
  const production =
    productionBranch({ default_branch: project.default_branch ?? null }, project.repo_default_branch ?? null) === body.branch;
  // A manual build always queues (a commit may be built again by hand): no 24-hour mark.
  const queued = await enqueueBuild({
    project,
    trigger: 'manual',
    target: production ? 'production' : 'preview',
    branch: body.branch,
    commitSha: body.commit_sha ?? null,
    commitMessage: null,
    label: production ? null : branchLabel(body.branch),
    mergeRequest: null,
  });
  return queued!;
}

/** POST .../auto-deploy/resume: the breaker cleared; answers the project. */
export async function resumeProjectAutoDeploy(project: ProjectItem): Promise<Project> {
  await resumeAutoDeploy(project.id);
  const item = await getProjectItem(project.id, true);
  if (!item) throw new ApiError(PROJECT_NOT_FOUND);
  return toProject(item);
}

export const buildLogQuerySchema = z.strictObject({
  cursor: z.optional(z.string()),
  limit: z.optional(z.string()),
});

/** Most lines one call returns. */
const MAX_LOG_PAGE = 1000;

/**
 * GET .../deployments/{id}/log: the polling cursor. `lines` from line
 * `cursor` on; `next_cursor` is where the next call starts; `done` says the
 * build has ended, so nothing more will come once `next_cursor` is reached.
 */
export async function buildLogPage(project: ProjectItem, deploymentId: string, query: z.infer<typeof buildLogQuerySchema>) {
  if (!UUID_PATTERN.test(deploymentId)) throw new ApiError(DEPLOYMENT_NOT_FOUND, { details: { deployment_id: deploymentId } });
  const cursor = query.cursor === undefined ? 0 : Number(query.cursor);
  if (!Number.isInteger(cursor) || cursor < 0) throw new ApiError(BUILD_LOG_CURSOR_INVALID);
  const limit = Math.min(MAX_LOG_PAGE, Math.max(1, Number(query.limit ?? MAX_LOG_PAGE) || MAX_LOG_PAGE));
  const found = await getBuild(project.id, deploymentId.toLowerCase());
  if (!found) throw new ApiError(DEPLOYMENT_NOT_FOUND, { details: { deployment_id: deploymentId } });
  // A build whose worker was lost ends here, so a follower's polling ends too.
  const build = await settleIfLost(found);
  const status = build.status;
  // A build's publish makes the deployment ready before its last log line is written: its end is finished_at.
  const done = !['queued', 'building'].includes(status) && (!build.trigger || typeof build.finished_at === 'string');
  const lines = build.trigger
    ? await readLogLines(build.id, cursor, limit)
    : (Array.isArray(build.build_log) ? (build.build_log as string[]) : []).slice(cursor, cursor + limit);
  return { deployment_id: build.id as string, status, lines, cursor, next_cursor: cursor + lines.length, done };
}
