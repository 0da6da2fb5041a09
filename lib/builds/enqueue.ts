import { randomUUID } from 'node:crypto';
import { sendMessage } from '../aws/sqs-lite.ts';
import { config } from '../config.ts';
import type { BuildTarget, BuildTrigger } from './events.ts';
import { cancelBuild, recordQueuedBuild, recordSkippedBuild, type NewBuild } from './build-records.ts';
import { previewUrl } from '../sites/preview-hosts.ts';
import { ensurePreviewSlug } from '../sites/preview-records.ts';
import type { ProjectItem } from '../projects/records.ts';

/**
 * Builds enter the builds queue here, whatever started them (a webhook, the
 * API): the build is recorded `queued` as its branch's newest, the build it
 * displaced is cancelled, and the message goes to the queue. A skipped build
 * is only recorded.
 */
export interface BuildRequest {
  project: ProjectItem;
  trigger: BuildTrigger;
  target: BuildTarget;
  branch: string;
  commitSha: string | null;
  commitMessage: string | null;
  label: string | null;
  mergeRequest: number | null;
}

export interface QueuedBuildView {
  project_id: string;
  deployment_id: string;
  status: 'queued' | 'skipped';
  trigger: BuildTrigger;
  target: BuildTarget;
  branch: string;
  commit_sha: string | null;
  preview_url: string | null;
  skip_reason?: string;
}

export interface BuildMessage {
  kind: 'start' | 'follow';
  project_id: string;
  deployment_id: string;
}

export async function sendBuildMessage(message: BuildMessage, delaySeconds?: number): Promise<void> {
  await sendMessage({ queueUrl: config.queueUrl('builds'), body: JSON.stringify(message), delaySeconds });
}

function newBuild(request: BuildRequest, skipReason?: string): NewBuild {
  return {
    projectId: request.project.id,
    teamId: request.project.team_id,
    deploymentId: randomUUID(),
    trigger: request.trigger,
    target: request.target,
    branch: request.branch,
    commitSha: request.commitSha,
    commitMessage: request.commitMessage,
    label: request.label,
    mergeRequest: request.mergeRequest,
    skipReason,
  };
}

async function view(request: BuildRequest, build: NewBuild, status: 'queued' | 'skipped'): Promise<QueuedBuildView> {
  const slug = request.target === 'preview' && request.label ? await ensurePreviewSlug(request.project) : null;
  return {
    project_id: build.projectId,
    deployment_id: build.deploymentId,
    status,
    trigger: build.trigger,
    target: build.target,
    branch: build.branch,
    commit_sha: build.commitSha,
    preview_url: slug && request.label ? previewUrl(request.label, slug) : null,
    ...(build.skipReason ? { skip_reason: build.skipReason } : {}),
  };
}

/**
 * Queues a build. With `oncePer24h` (a webhook delivery) a commit already queued for the same branch
 * or merge request of the project in the last 24 hours is not queued again: null, nothing written.
 */
export async function enqueueBuild(request: BuildRequest, options: { oncePer24h?: boolean } = {}): Promise<QueuedBuildView | null> {
  const build = newBuild(request);
  const answer = await view(request, build, 'queued');
  const { displaced, alreadyBuilt } = await recordQueuedBuild(build, options);
  if (alreadyBuilt) return null;
  if (displaced) await cancelBuild(build.projectId, displaced, 'A newer build of this branch started.');
  await sendBuildMessage({ kind: 'start', project_id: build.projectId, deployment_id: build.deploymentId });
  return answer;
}

export async function recordSkipped(request: BuildRequest, reason: string): Promise<QueuedBuildView> {
  const build = newBuild(request, reason);
  await recordSkippedBuild({ ...build, skipReason: reason });
  return view(request, build, 'skipped');
}
