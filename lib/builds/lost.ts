import { config } from '../config.ts';
import { appendLogLines } from './build-log-records.ts';
import { endLostBuild, getBuild, type BuildStatus } from './build-records.ts';
import { releaseBuildSlot } from './build-slot-records.ts';
import type { DeploymentItem } from '../deployments/records.ts';

/**
 * A build whose worker died (mid-build or mid-publish) is never finished by
 * anyone: it would stay `building`, and a follower of its log would poll
 * forever. Whoever reads a build (the deployment, its log, the listing)
 * ends it once its time budget and a grace (BUILD_LOST_GRACE_MS) have passed
 * since it started: a platform failure, which never counts in the breaker.
 * The end is a conditional write, so a late real finish and this leave one
 * outcome.
 */

/** A duration as the build's lines say it: "15 minutes", "1 second". */
export function budgetText(ms = config.buildTimeBudgetMs()): string {
  const [n, unit] = ms >= 60_000 ? [Math.round(ms / 60_000), 'minute'] : [Math.round(ms / 1000), 'second'];
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

const lostLine = () =>
  `The build stopped reporting and was ended ${budgetText(config.buildLostGraceMs())} past its time budget of ${budgetText()}. ` +
  'This is a platform issue; please retry.';

function isLost(item: DeploymentItem, now: number): boolean {
  if (!item.trigger || typeof item.started_at !== 'string' || typeof item.finished_at === 'string') return false;
  if (!['building', 'ready', 'failed'].includes(item.status)) return false;
  return now - Date.parse(item.started_at) > config.buildTimeBudgetMs() + config.buildLostGraceMs();
}

/** The build as it is after ending it if it was lost (the item itself when it was not). */
export async function settleIfLost(item: DeploymentItem): Promise<DeploymentItem> {
  if (!isLost(item, Date.now())) return item;
  const projectId = item.project_id;
  const deploymentId = item.id;
  const building = item.status === 'building';
  const line = lostLine();
  const kept = item.log_lines ?? 0;
  // The line is written after the end is won (a lost race writes nothing); its count goes with the end.
  const withLine = building && kept < config.buildLogMaxLines() ? kept + 1 : kept;
  if (await endLostBuild(projectId, deploymentId, item.status as BuildStatus, building ? { message: line, logLines: withLine } : null)) {
    if (withLine > kept) await appendLogLines(deploymentId, kept, [line]);
    await releaseBuildSlot(item.team_id, deploymentId);
  }
  return (await getBuild(projectId, deploymentId)) ?? item;
}
