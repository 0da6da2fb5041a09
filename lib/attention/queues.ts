import pLimit from 'p-limit';
import { batchGetAll } from '../db/batch.ts';
import { keys } from '../db/keys.ts';
import { getTeamOwner } from '../teams/membership-records.ts';
import { listFeedbackInbox, type FeedbackInboxRow } from './feedback.ts';
import { PAYING_IDLE_DAYS } from './team-state.ts';
import { type BilledAttentionItem, type BillingBucket, billingBucketTeams, stuckTeams } from '../teams/team-state-records.ts';
import type { TeamItem } from '../teams/records.ts';
import type { User } from '../users/user-records.ts';
import type { TableKey } from '../db/item.ts';
import type { FailedWebhookEvent } from './webhook-records.ts';
import { listFailedWebhookEvents } from './webhooks.ts';

/**
 * GET /api/v1/admin/attention: every queue is one query of an index partition
 * (never a scan), then reads by key of the teams, project counters, owners
 * and their users for the rows listed. Each list holds at most QUEUE_LIMIT rows.
 */

/** A team that has not published this long after it was created is stuck in activation. */
export const STUCK_AFTER_HOURS = 24;
export const QUEUE_LIMIT = 100;
const DAY_MS = 86_400_000;
const OWNER_LOOKUPS_AT_ONCE = 8;

export interface StuckActivationRow {
  created_at: string;
  deploy_attempts: number;
  id: string;
  last_activity_at: string;
  latest_failure_reason: string | null;
  name: string;
  owner_email: string | null;
  owner_name: string | null;
  project_count: number;
}

export interface BillingRow {
  age_days: number;
  cancel_at_period_end: boolean;
  created_at: string;
  last_successful_deploy_at: string | null;
  owner_email: string | null;
  plan: string;
  status: string;
  subscription_count: number;
  team_id: string;
  team_name: string;
}

export interface AttentionQueues {
  billing_attention: { cancelling: BillingRow[]; past_due: BillingRow[]; paying_idle: BillingRow[]; pending_payment: BillingRow[] };
  failed_webhook_events: FailedWebhookEvent[];
  feedback_inbox: FeedbackInboxRow[];
  stuck_activation: { no_projects: StuckActivationRow[]; no_successful_deploy: StuckActivationRow[] };
}

/** Team items, project counters and owners (name and e-mail) of these teams, by key. */
async function teamsAndOwners(teamIds: string[]) {
  const unique = [...new Set(teamIds)];
  const [teams, counters] = await Promise.all([
    batchGetAll<TeamItem>(unique.map((id) => keys.team(id))),
    batchGetAll<TableKey & { project_count?: number }>(unique.map((id) => keys.teamProjectCount(id))),
  ]);
  const limit = pLimit(OWNER_LOOKUPS_AT_ONCE);
  const owners = await Promise.all(unique.map((id) => limit(async () => [id, await getTeamOwner(id)] as const)));
  const users = await batchGetAll<User>(owners.flatMap(([, o]) => (o ? [keys.user(o.user_id)] : [])));
  const userById = new Map(users.map((u) => [u.user_id, u]));
  const ownerOf = new Map(owners.map(([id, o]) => [id, o ? userById.get(o.user_id) : undefined]));
  return {
    team: new Map(teams.map((t) => [t.id, t])),
    projectCount: new Map(counters.map((c) => [c.pk.slice('TEAM#'.length), c.project_count ?? 0])),
    owner: (id: string) => ({
      email: ownerOf.get(id)?.email ?? null,
      name: ownerOf.get(id)?.name ?? null,
    }),
  };
}

/** A team on its way out is nobody's attention item. */
const isLeaving = (team: TeamItem) => team.status === 'pending_deletion' || team.status === 'purging';

export async function attentionQueues(now = new Date()): Promise<AttentionQueues> {
  const stuckBefore = new Date(now.getTime() - STUCK_AFTER_HOURS * 3_600_000).toISOString();
  const idleBefore = new Date(now.getTime() - PAYING_IDLE_DAYS * DAY_MS).toISOString();
  const bucket = (name: BillingBucket, before?: string) => billingBucketTeams(name, QUEUE_LIMIT, before);
  const [stuck, cancelling, pastDue, payingIdle, pendingPayment, failedWebhooks, feedback] = await Promise.all([
    // Both stuck lists come from one partition: read enough for each to fill, newest sign-ups first.
    stuckTeams(stuckBefore, 2 * QUEUE_LIMIT),
    bucket('CANCELLING'),
    bucket('PAST_DUE'),
    bucket('PAYING', idleBefore),
    bucket('PENDING_PAYMENT'),
    listFailedWebhookEvents(now),
    listFeedbackInbox(),
  ]);
  const billingItems = [...cancelling, ...pastDue, ...payingIdle, ...pendingPayment];
  const lookup = await teamsAndOwners([...stuck, ...billingItems].map((i) => i.team_id));

  const noProjects: StuckActivationRow[] = [];
  const noSuccessfulDeploy: StuckActivationRow[] = [];
  for (const item of stuck) {
    const id = item.team_id;
    const team = lookup.team.get(id);
    if (!team || isLeaving(team)) continue;
    const owner = lookup.owner(id);
    const projectCount = lookup.projectCount.get(id) ?? 0;
    const row: StuckActivationRow = {
      created_at: item.team_created_at,
      deploy_attempts: item.deploy_attempts ?? 0,
      id,
      last_activity_at: item.last_activity_at,
      latest_failure_reason: item.latest_failure_reason ?? null,
      name: team.name,
      owner_email: owner.email,
      owner_name: owner.name,
      project_count: projectCount,
    };
    const list = projectCount === 0 ? noProjects : noSuccessfulDeploy;
    if (list.length < QUEUE_LIMIT) list.push(row);
  }

  const billingRows = (items: BilledAttentionItem[]): BillingRow[] =>
    items.flatMap((item) => {
      const id = item.team_id;
      const team = lookup.team.get(id);
      if (!team) return [];
      const createdAt = item.sub_created_at;
      return [
        {
          age_days: Math.max(0, Math.floor((now.getTime() - Date.parse(createdAt)) / DAY_MS)),
          cancel_at_period_end: item.sub_cancel_at_period_end === true,
          created_at: createdAt,
          last_successful_deploy_at: item.last_successful_deploy_at ?? null,
          owner_email: lookup.owner(id).email,
          plan: item.sub_plan,
          status: item.sub_status,
          subscription_count: item.subscription_count ?? 0,
          team_id: id,
          team_name: team.name,
        },
      ];
    });

  return {
    billing_attention: {
      cancelling: billingRows(cancelling),
      past_due: billingRows(pastDue),
      paying_idle: billingRows(payingIdle),
      pending_payment: billingRows(pendingPayment),
    },
    failed_webhook_events: failedWebhooks,
    feedback_inbox: feedback,
    stuck_activation: { no_projects: noProjects, no_successful_deploy: noSuccessfulDeploy },
  };
}
