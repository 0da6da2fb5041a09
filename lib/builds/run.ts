import { config } from '../config.ts';
import { isApiError } from '../errors/api-error.ts';
import { logger } from '../logger.ts';
import { getProjectItem } from '../projects/records.ts';
import { getTeam } from '../teams/teams.ts';
import { recordBuildSuccess, recordUserFailure } from './breaker-records.ts';
import { appendCapped } from './build-log.ts';
import { claimBuild, dropQueuedBuild, finishBuild, getBuild, recordBuildHandle, recordLogProgress } from './build-records.ts';
import { acquireBuildSlot, releaseBuildSlot } from './build-slot-records.ts';
import { failureSignature, type ClassifiedFailure } from './classify.ts';
import { sendBuildMessage, type BuildMessage } from './enqueue.ts';
import type { BuildHost, BuildReport } from './host.ts';
import { BuildSetupError, prepareBuildJob } from './job.ts';
import { budgetText } from './lost.ts';
import { setPreview } from '../sites/preview-records.ts';
import { publishBuildOutput } from './publish-output.ts';
import type { DeploymentItem } from '../deployments/records.ts';

/**
 * The builds worker (docs/builds.md): a `start` message claims a queued build
 * (queued -> building, a conditional write, so a redelivered message never
 * starts it twice) within the team's concurrency cap, and asks the host to
 * run it; the worker then follows it for a while, copying its log, stopping
 * it when a newer build cancels it or the time budget runs out, and when it
 * ends publishes its output or records the failure. A build that outlasts
 * one follow window is handed on to a `follow` message.
 */
type Build = DeploymentItem;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How long a team's place is held: the budget, and the grace after which a build counts as lost (lib/builds/lost.ts). */
const slotSeconds = () => Math.ceil((config.buildTimeBudgetMs() + config.buildLostGraceMs()) / 1000);

export async function handleBuildMessage(message: BuildMessage, host: BuildHost): Promise<void> {
  const build = await getBuild(message.project_id, message.deployment_id);
  if (!build) return;
  if (message.kind === 'start') return startBuild(build, host);
  if (build.status === 'building') return followBuild(build, host);
}

async function startBuild(build: Build, host: BuildHost): Promise<void> {
  if (build.status !== 'queued') return;
  const projectId = build.project_id;
  const deploymentId = build.id;
  const project = await getProjectItem(projectId, true);
  if (!project || project.status !== 'active')
    return void (await dropQueuedBuild(projectId, deploymentId, { status: 'canceled', reason: 'The project was deleted.' }));
  const team = await getTeam(project.team_id);
  if (!team || (team as { suspended_at?: unknown }).suspended_at) {
    return void (await dropQueuedBuild(projectId, deploymentId, { status: 'skipped', reason: 'team_suspended' }));
  }
  if (!(await acquireBuildSlot(team.id, deploymentId, config.buildConcurrencyPerTeam(), slotSeconds()))) {
    // The team runs as many builds as it may: this one waits its turn in the queue.
    return sendBuildMessage({ kind: 'start', project_id: projectId, deployment_id: deploymentId }, config.buildRequeueDelaySeconds());
  }
  if (!(await claimBuild(projectId, deploymentId))) return releaseBuildSlot(team.id, deploymentId);
  const claimed: Build = { ...build, status: 'building', started_at: new Date().toISOString() };
  let handle: string;
  try {
    handle = await host.start(await prepareBuildJob(project, claimed));
  } catch (error) {
    const setup = error instanceof BuildSetupError;
    if (!setup) logger.error('a build could not be started', { deployment_id: deploymentId, error: (error as Error).message });
    const message = setup
      ? (error as Error).message
      : 'The build service could not start the build. This is a platform issue; please retry.';
    return endFailed(claimed, { kind: 'platform', message }, 0, host, null);
  }
  await recordBuildHandle(projectId, deploymentId, handle);
  return followBuild({ ...claimed, build_handle: handle }, host);
}

async function followBuild(build: Build, host: BuildHost): Promise<void> {
  const handle = build.build_handle;
  const kept = { read: build.log_read ?? 0, lines: build.log_lines ?? 0 };
  if (!handle)
    return endFailed(
      build,
      { kind: 'platform', message: 'The build was lost. This is a platform issue; please retry.' },
      kept.lines,
      host,
      null,
    );
  const deadline = Date.now() + config.buildFollowWindowMs();
  for (;;) {
    const report = await host.report(handle, kept.read);
    if (report.lines.length > 0) {
      kept.lines = await appendCapped(build.id, kept.lines, report.lines);
      kept.read += report.lines.length;
      await recordLogProgress(build.project_id, build.id, { read: kept.read, kept: kept.lines });
    }
    if (report.state !== 'running') return settle(build, report, kept.lines, host, handle);
    const current = await getBuild(build.project_id, build.id);
    if (current?.cancel_requested_at) {
      await host.stop(handle);
      await finishBuild(build.project_id, build.id, { status: 'canceled' });
      return release(build, host, handle);
    }
    if (Date.now() - Date.parse(build.started_at ?? '') > config.buildTimeBudgetMs()) {
      await host.stop(handle);
      return endFailed(
        build,
        { kind: 'user', message: `Build failed: it ran past its time budget of ${budgetText()} and was stopped.` },
        kept.lines,
        host,
        handle,
      );
    }
    if (Date.now() > deadline) return sendBuildMessage({ kind: 'follow', project_id: build.project_id, deployment_id: build.id });
    await sleep(config.buildPollMs());
  }
}

async function settle(build: Build, report: BuildReport, kept: number, host: BuildHost, handle: string): Promise<void> {
  if (report.state === 'succeeded' && report.outputDir) return publishStep(build, report, kept, host, handle);
  const failure: ClassifiedFailure =
    report.state === 'lost' || !report.failure
      ? {
          kind: 'platform',
          message: 'The build was lost (the build service stopped it or the platform restarted). This is a platform issue; please retry.',
        }
      : { kind: report.failure.kind, message: report.failure.line };
  return endFailed(build, failure, kept, host, handle);
}

const NOT_PUBLISHABLE = new Set([
  'UPLOAD_SOURCE_CODE',
  'UPLOAD_SITE_IN_SUBFOLDER',
  'UPLOAD_PHP_SITE',
  'INVALID_MANIFEST',
  'PLAN_LIMIT_EXCEEDED',
]);

/** Why publishing a build's output failed, and the log lines that say more. */
function publishFailure(error: unknown): { failure: ClassifiedFailure; lines: string[] } {
  if (isApiError(error) && error.code === 'FUNCTIONS_BUILD_FAILED') {
    const lines = ((error.details as { build_log?: string[] } | null)?.build_log ?? []).map(String);
    return {
      failure: { kind: 'user', message: lines.find((l) => l.includes('Build failed')) ?? lines[0] ?? '[functions] Build failed' },
      lines,
    };
  }
  if (isApiError(error) && NOT_PUBLISHABLE.has(error.code)) {
    return { failure: { kind: 'user', message: `Not publishable (${error.code}): ${error.message}` }, lines: [] };
  }
  if (isApiError(error) && error.status < 500)
    return { failure: { kind: 'platform', message: `Not published: ${error.message}` }, lines: [] };
  logger.error('publishing a build failed', { error: (error as Error).message });
  return {
    failure: { kind: 'platform', message: 'Publishing the output failed on the platform side. This is a platform issue; please retry.' },
    lines: [],
  };
}

async function publishStep(build: Build, report: BuildReport, kept: number, host: BuildHost, handle: string): Promise<void> {
  const projectId = build.project_id;
  const deploymentId = build.id;
  const project = await getProjectItem(projectId, true);
  if (!project || project.status !== 'active')
    return endFailed(build, { kind: 'platform', message: 'The project was deleted.' }, kept, host, handle);
  const target = build.target as 'production' | 'preview';
  let lines = kept;
  try {
    lines = await appendCapped(deploymentId, lines, ['Publishing the output.']);
    await publishBuildOutput({ project, deploymentId, target, branch: build.branch ?? '', outputDir: report.outputDir! });
  } catch (error) {
    const { failure, lines: extra } = publishFailure(error);
    lines = await appendCapped(deploymentId, lines, extra);
    return endFailed(build, failure, lines, host, handle);
  }
  const published = await getBuild(projectId, deploymentId);
  const functionsLog = Array.isArray(published?.build_log) ? (published.build_log as string[]) : [];
  if (target === 'preview' && build.preview_label) {
    await setPreview({
      projectId,
      label: build.preview_label,
      deploymentId,
      branch: build.branch ?? '',
      mergeRequest: build.merge_request ?? null,
    });
  }
  lines = await appendCapped(deploymentId, lines, [
    ...functionsLog,
    target === 'production' ? 'Published: production serves this build.' : 'Published as a preview.',
  ]);
  await finishBuild(projectId, deploymentId, { status: 'ready', extra: { log_lines: lines, ...commitFields(report) } });
  await recordBuildSuccess(projectId, build.trigger === 'manual');
  await release(build, host, handle);
}

const commitFields = (report: BuildReport) =>
  report.commit ? { commit_sha: report.commit.sha, commit_message: report.commit.message } : {};

async function endFailed(build: Build, failure: ClassifiedFailure, kept: number, host: BuildHost, handle: string | null): Promise<void> {
  const lines = await appendCapped(build.id, kept, [failure.message]);
  const projectId = build.project_id;
  const ended = await finishBuild(projectId, build.id, { status: 'failed', failure, extra: { log_lines: lines } });
  // A build already ended as lost (lib/builds/lost.ts) keeps that outcome: this late failure does not count.
  if (ended && failure.kind === 'user') {
    await recordUserFailure(projectId, { message: failure.message, signature: failureSignature(failure.message) });
  }
  await release(build, host, handle);
}

async function release(build: Build, host: BuildHost, handle: string | null): Promise<void> {
  if (handle)
    await host.release(handle).catch((error: unknown) => logger.warn('build host release failed', { error: (error as Error).message }));
  await releaseBuildSlot(build.team_id, build.id);
}
