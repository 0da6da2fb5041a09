import { ApiError } from '../errors/api-error.ts';
import { SUBSCRIPTION_CHANGED } from '../errors/catalogue/admin.ts';
import { logger } from '../logger.ts';
import type { PlanName } from '../plans.ts';
import type { TableKey } from '../db/item.ts';
import { keys } from '../db/keys.ts';
import {
  addDeployAttempt,
  type AttentionChange,
  type BilledAttentionItem,
  type BillingBucket,
  bucketKeys,
  getTeamAttention,
  setLatestFailure,
  SUBSCRIPTION_STATUSES,
  type SubscriptionStatus,
  type TeamAttentionItem,
  writeAttentionChange,
} from '../teams/team-state-records.ts';

/**
 * A team's attention state, one item per team (`TEAM#{id}` / `ATTENTION`),
 * read by the admin attention queues (GET /api/v1/admin/attention) by key:
 *
 * - Activation: written with the team (createTeam) into the stuck-activation
 *   index (gsi1 `STUCKACTIVATION`, sorted by the team's creation); each begin
 *   of an upload adds a deploy attempt, each refused begin or failed build sets
 *   the latest failure reason, and the first successful publish takes the team
 *   out of the index for good.
 * - Subscription: set by platform admins (PUT /api/v1/admin/teams/{id}/subscription);
 *   its billing bucket (gsi2 `BILLING#...`) follows from plan, status,
 *   cancel_at_period_end and the last successful deploy.
 *
 * Every write that moves the billing bucket reads the item and writes it back
 * on condition of its `version`, retrying on a conflict, so a subscription
 * change racing a publish never leaves the item in the wrong bucket. Counters
 * (deploy attempts) are single atomic ADDs. Teams created before this item
 * existed have none: they are never listed as stuck, and a subscription set
 * for one creates the item (see docs/attention.md).
 */

export { SUBSCRIPTION_STATUSES, type SubscriptionStatus };

/** Statuses after which the next non-ending status starts a new subscription (subscription_count + 1). */
const ENDED: readonly SubscriptionStatus[] = ['canceled', 'incomplete_expired'];

/** A paying subscription with no successful deploy for this long is `paying_idle`. */
export const PAYING_IDLE_DAYS = 30;

export interface Subscription {
  team_id: string;
  plan: PlanName;
  status: SubscriptionStatus;
  cancel_at_period_end: boolean;
  /** When the current subscription started. */
  created_at: string;
  updated_at: string;
  /** How many subscriptions the team has started, the current one included. */
  subscription_count: number;
  last_successful_deploy_at: string | null;
}

/** The billing bucket a subscription belongs in, or none. One bucket per team: the first that applies, in this order. */
export function billingBucketOf(s: { plan?: unknown; status?: unknown; cancel_at_period_end?: unknown }): BillingBucket | null {
  switch (s.status) {
    case 'incomplete':
      return 'PENDING_PAYMENT';
    case 'past_due':
    case 'unpaid':
      return 'PAST_DUE';
    case 'active':
    case 'trialing':
      if (s.cancel_at_period_end === true) return 'CANCELLING';
      // A trial pays nothing yet, and the free plan never pays: neither is "paying".
      return s.status === 'active' && s.plan !== 'free' ? 'PAYING' : null;
    default:
      return null;
  }
}

/** An item's billing bucket: paying teams sort by their last successful deploy (never deployed first). */
function bucketOf(item: TeamAttentionItem): AttentionChange['bucket'] {
  const bucket = billingBucketOf({ plan: item.sub_plan, status: item.sub_status, cancel_at_period_end: item.sub_cancel_at_period_end });
  if (!bucket) return null;
  // A bucket follows from a subscription, which always sets sub_created_at.
  const sort = bucket === 'PAYING' ? (item.last_successful_deploy_at ?? '') : (item.sub_created_at ?? '');
  return { name: bucket, sort };
}

/**
 * A team's attention item, read ahead by a caller that will record a change to it: a publish reads it
 * while it works, so recording the successful deploy afterwards is one write. Left unawaited (a failed
 * publish records nothing), its failure is not unhandled; the write it was read for reads again.
 */
export function readTeamState(teamId: string): Promise<TeamAttentionItem | undefined> {
  const read = getTeamAttention(teamId);
  read.catch(() => undefined);
  return read;
}

const MAX_ATTEMPTS = 12;
const jitter = (attempt: number) => new Promise((r) => setTimeout(r, Math.random() * 10 * (attempt + 1)));

/** The `once` marker of a write already exists: that write was made before, and nothing was written now. */
export class AlreadyWritten extends Error {
  constructor() {
    super('The write was already made once');
    this.name = 'AlreadyWritten';
  }
}

/**
 * Read, change, write back on condition of the version read; retried on a
 * conflict. `change` returns the attributes to set (null: nothing to do); the
 * billing keys are recomputed from the result. With `once`, that item is put
 * in the same transaction on condition that it does not exist yet, so the
 * change happens at most once per marker however often and however
 * concurrently it is asked for (a redelivered webhook event); when the
 * marker exists, AlreadyWritten is thrown and nothing is written.
 */
async function versionedUpdate(
  teamId: string,
  change: (
    item: TeamAttentionItem | undefined,
  ) => { set: Partial<TeamAttentionItem>; remove?: (keyof TeamAttentionItem)[]; create?: boolean } | null,
  once?: TableKey,
  /** The item as the caller already read it (readTeamState): the first attempt starts from it; a stale one only loses the version race. */
  firstRead?: Promise<TeamAttentionItem | undefined>,
): Promise<TeamAttentionItem | null> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const item = attempt === 0 && firstRead ? await firstRead.catch(() => getTeamAttention(teamId)) : await getTeamAttention(teamId);
    const decided = change(item);
    if (!decided) return null;
    if (!item && !decided.create) return null;
    const version = item?.version ?? 0;
    const next: TeamAttentionItem = {
      ...(item ?? { ...keys.teamAttention(teamId), type: 'team_attention', team_id: teamId }),
      ...decided.set,
      version: version + 1,
    };
    const bucket = bucketOf(next);
    const remove = decided.remove ?? [];
    const marker = once ? { item: once, refusal: () => new AlreadyWritten() } : undefined;
    if (await writeAttentionChange(teamId, item, { set: decided.set, remove, bucket }, marker)) {
      const removed: (keyof TeamAttentionItem)[] = bucket ? remove : [...remove, 'gsi2pk', 'gsi2sk'];
      for (const name of removed) delete next[name];
      Object.assign(next, bucketKeys(teamId, bucket));
      return next;
    }
    await jitter(attempt);
  }
  throw new ApiError(SUBSCRIPTION_CHANGED);
}

export function toSubscription(item: BilledAttentionItem): Subscription {
  return {
    team_id: item.team_id,
    plan: item.sub_plan,
    status: item.sub_status,
    cancel_at_period_end: item.sub_cancel_at_period_end === true,
    created_at: item.sub_created_at,
    updated_at: item.sub_updated_at,
    subscription_count: item.subscription_count ?? 0,
    last_successful_deploy_at: item.last_successful_deploy_at ?? null,
  };
}

/** An item a subscription was set on: every `sub_*` attribute a subscription writes is there. */
const hasSubscription = (item: TeamAttentionItem | null | undefined): item is BilledAttentionItem =>
  item?.sub_status !== undefined && item.sub_plan !== undefined && item.sub_created_at !== undefined && item.sub_updated_at !== undefined;

export interface SubscriptionInput {
  plan: PlanName;
  status: SubscriptionStatus;
  cancel_at_period_end: boolean;
  created_at?: string;
  /**
   * When the billing provider made the event this input comes from. Providers do not deliver in order:
   * an input older than the one last applied is dropped (setTeamSubscription returns null).
   */
  source_event_at?: string;
}

/**
 * Sets a team's subscription (the operator command behind
 * PUT /api/v1/admin/teams/{id}/subscription). The team's first subscription,
 * and a status that is not ended following an ended one (`canceled`,
 * `incomplete_expired`), start a new subscription: `created_at` is then the
 * given one (default now) and `subscription_count` goes up by one. The team must exist
 * (the caller checks). `once`: see versionedUpdate (AlreadyWritten). Null only
 * for an input with `source_event_at` older than the last applied one.
 */
export async function setTeamSubscription(
  teamId: string,
  input: SubscriptionInput,
  now = new Date(),
  options: { once?: TableKey } = {},
): Promise<Subscription | null> {
  const at = now.toISOString();
  const written = await versionedUpdate(
    teamId,
    (item) => {
      // A provider's event older than the one the subscription already reflects arrived late: it changes nothing.
      const applied = item?.sub_source_event_at;
      if (input.source_event_at && applied && applied > input.source_event_at) return null;
      const previous = item?.sub_status;
      // The first subscription a team is given counts, even one recorded as already ended; after an
      // ended one, the next that is not ended is a new subscription.
      const starts = previous === undefined || (ENDED.includes(previous) && !ENDED.includes(input.status));
      const set: Partial<TeamAttentionItem> = {
        sub_plan: input.plan,
        sub_status: input.status,
        sub_cancel_at_period_end: input.cancel_at_period_end,
        sub_updated_at: at,
      };
      if (input.source_event_at) set.sub_source_event_at = input.source_event_at;
      if (starts) {
        set.sub_created_at = input.created_at ?? at;
        set.subscription_count = (item?.subscription_count ?? 0) + 1;
      } else if (input.created_at) {
        set.sub_created_at = input.created_at;
      }
      return { set, create: true };
    },
    options.once,
  );
  return hasSubscription(written) ? toSubscription(written) : null;
}

export async function getTeamSubscription(teamId: string): Promise<Subscription | null> {
  const item = await getTeamAttention(teamId);
  return hasSubscription(item) ? toSubscription(item) : null;
}

/**
 * Best effort on a request path: the attention state describes what
 * happened, so a lost write of it must never fail a begin or a publish. It
 * is logged instead.
 */
async function quietly(what: string, teamId: string, write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (error) {
    logger.warn('attention state not recorded', { what, team_id: teamId, error: (error as Error).name });
  }
}

/** A begin of an upload (new project or existing one): one deploy attempt. */
export const recordDeployAttempt = (teamId: string, now = new Date()) =>
  quietly('deploy_attempt', teamId, () => addDeployAttempt(teamId, now.toISOString()));

/** A refused begin or a failed build: its error code is the latest failure reason. */
export const recordDeployFailure = (teamId: string, reason: string, now = new Date()) =>
  quietly('deploy_failure', teamId, () => setLatestFailure(teamId, reason, now.toISOString()));

/**
 * A publish made a deployment live: the team leaves the stuck-activation
 * index, and a paying team's place in the paying index moves with the new
 * last successful deploy.
 */
export const recordSuccessfulDeploy = (teamId: string, now = new Date(), read?: Promise<TeamAttentionItem | undefined>) =>
  quietly('successful_deploy', teamId, async () => {
    const at = now.toISOString();
    await versionedUpdate(
      teamId,
      (item) => {
        if (!item) return null;
        const latest = item.last_successful_deploy_at;
        return {
          set: {
            last_successful_deploy_at: latest && latest > at ? latest : at,
            last_activity_at: at,
            activated_at: item.activated_at ?? at,
          },
          // Out of the stuck-activation index for good: nothing puts these keys back.
          remove: ['gsi1pk', 'gsi1sk'],
        };
      },
      undefined,
      read,
    );
  });

/**
 * Runs one begin of an upload as a deploy attempt: counted, and when it is
 * refused (an error with a code), its code becomes the latest failure reason.
 */
export async function asDeployAttempt<T>(teamId: string, begin: () => Promise<T>): Promise<T> {
  // Counted while the begin runs (quietly: it never throws), and awaited before the answer either way.
  const counted = recordDeployAttempt(teamId);
  try {
    return await begin();
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (error instanceof ApiError && typeof code === 'string' && error.status < 500) await recordDeployFailure(teamId, code);
    throw error;
  } finally {
    await counted;
  }
}
