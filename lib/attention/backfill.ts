import { batchGetAll } from '../db/batch.ts';
import { keys } from '../db/keys.ts';
import { teamProjectItems, type ProjectItem } from '../projects/records.ts';
import type { DeploymentItem } from '../deployments/records.ts';
import type { TableKey } from '../db/item.ts';
import { scanTeamItemsPage } from '../teams/records.ts';
import { insertTeamAttention } from '../teams/team-state-records.ts';

/**
 * Operator command `admin backfill-attention`: gives each team created before
 * the attention item existed its item, so the stuck-activation queue sees it.
 * It scans the table for team items, which is why it is an operator command
 * and never on a request path. A team with a live deployment is taken as
 * activated (its last successful deploy is the newest live deployment's
 * `ready_at`); the others enter the stuck queue with zero deploy attempts and
 * no failure reason, which the past did not record. A team that already has
 * its item (a subscription set, or a racing team creation) is left alone:
 * the write is conditional.
 */
export interface BackfillResult {
  /** Team items seen. */
  teams: number;
  /** Items written for teams that never published: they enter the stuck queue. */
  created: number;
  /** Items written for teams with a live deployment: activated. */
  activated: number;
  /** Teams that already had their item. */
  existing: number;
}

export async function backfillTeamAttention(): Promise<BackfillResult> {
  const result: BackfillResult = { teams: 0, created: 0, existing: 0, activated: 0 };
  let start: TableKey | undefined;
  do {
    const page = await scanTeamItemsPage(start);
    start = page.lastKey;
    for (const team of page.items) {
      result.teams++;
      const outcome = await backfillTeam(team.id, team.created_at);
      result[outcome]++;
    }
  } while (start);
  return result;
}

async function lastLiveDeploy(teamId: string): Promise<string | null> {
  const listed = await teamProjectItems(teamId);
  const projects = await batchGetAll<ProjectItem>(listed.map((p) => keys.project(p.id)));
  const live = projects.flatMap((p) =>
    typeof p.live_deployment_id === 'string' ? [{ id: p.id, deploymentId: p.live_deployment_id }] : [],
  );
  if (live.length === 0) return null;
  const deployments = await batchGetAll<DeploymentItem>(live.map((p) => keys.deployment(p.id, p.deploymentId)));
  const times = deployments
    .map((d) => d.ready_at ?? d.created_at)
    .filter(Boolean)
    .sort();
  return times.at(-1) ?? new Date().toISOString();
}

async function backfillTeam(teamId: string, createdAt: string): Promise<'created' | 'existing' | 'activated'> {
  const lastDeploy = await lastLiveDeploy(teamId);
  if (!(await insertTeamAttention(teamId, createdAt, lastDeploy))) return 'existing';
  return lastDeploy ? 'activated' : 'created';
}
