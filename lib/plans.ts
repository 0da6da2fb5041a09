/**
 * Plans and their limits, as configuration in one place. A team's plan is the
 * `plan` attribute of its team item (set by `admin set-plan`); a team without
 * one is on `free`. Documented in docs/sites.md.
 */
export const plans = {
  free: { siteLimit: 5, maxFiles: 10_000, maxUploadBytes: 250 * 1024 * 1024, maxOpenUploadSessions: 10 },
  pro: { siteLimit: 50, maxFiles: 25_000, maxUploadBytes: 2 * 1024 * 1024 * 1024, maxOpenUploadSessions: 20 },
  team: { siteLimit: 200, maxFiles: 50_000, maxUploadBytes: 10 * 1024 * 1024 * 1024, maxOpenUploadSessions: 50 },
} as const;

export type PlanName = keyof typeof plans;
export type Plan = (typeof plans)[PlanName] & { name: PlanName };

export const DEFAULT_PLAN: PlanName = 'free';

/**
 * Largest single file of a deployment, whatever the plan. Files over
 * MAX_INLINE_FILE_BYTES travel by upload URL, so this is a product limit, not
 * a transport one: raising it is a change of this constant alone.
 */
export const MAX_FILE_BYTES = 10 * 1024 * 1024;
/**
 * The largest file a PUT (or a batch) carries. Lambda takes a request of at
 * most 6 MB and API Gateway hands it a binary body base64-encoded (4/3 larger),
 * so a larger file goes by upload URL (lib/publishing/large-files.ts).
 */
export const MAX_INLINE_FILE_BYTES = 4 * 1024 * 1024;

export function isPlanName(value: unknown): value is PlanName {
  return typeof value === 'string' && Object.hasOwn(plans, value);
}

/** The plan of a team item (any object carrying the team's `plan` attribute). */
export function planOf(team: object): Plan {
  const name = (team as { plan?: unknown }).plan;
  const planName = isPlanName(name) ? name : DEFAULT_PLAN;
  return { ...plans[planName], name: planName };
}
/** Files in one batch upload request (POST /api/v1/uploads/{upload_id}/files). */
export const MAX_BATCH_FILES = 100;
/**
 * Bytes of files in one batch upload request: with the multipart framing and
 * base64 it still fits the 6 MB a Lambda request may be (see above).
 */
export const MAX_BATCH_BYTES = 4 * 1024 * 1024;
