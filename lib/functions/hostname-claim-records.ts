import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { batchGetAll } from '../db/batch.ts';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import { keys } from '../db/keys.ts';
import { queryAll } from '../db/query.ts';
import { ApiError } from '../errors/api-error.ts';
import { FUNCTION_HOSTNAME_TOO_LONG, SUBDOMAIN_CHANGE_TOO_MANY_FUNCTIONS } from '../errors/catalogue/sites.ts';
import { functionLabel, MAX_FUNCTION_LABEL_LENGTH } from './model.ts';
import { listProjectFunctionNames } from './records.ts';
import { getItem, type Stored } from '../db/item.ts';
import type { Write } from '../db/transact.ts';

/**
 * Function hostname claims: `FNHOST#{name}-{subdomain}` names the project (and
 * function name) that answers at that label. Names and subdomains both hold
 * hyphens, so two projects could make one label; the first to claim it holds
 * it, and the door resolves a host through its claim (lib/functions/resolve.ts).
 *
 * Every claim carries the project's index key (gsi1 `PROJECTFNHOSTS#{project}`)
 * so the project's claims can be found and released: when its subdomain
 * changes (the labels move, in the settings transaction) and when it is
 * deleted. Claims written before the index key existed are found by their
 * label instead (names of the project's functions x its subdomain).
 */

export interface HostnameClaim {
  label: string;
  name: string;
}

/** A function hostname's claim: which project's function answers at the label (listed under the project, gsi1). */
export type HostnameClaimItem = Stored<{ type: 'function_host'; project_id: string; name: string; label: string; claimed_at: string }>;

/** The claim item of a label for a project: written by a build, or moved by a subdomain change. */
export function hostnameClaimItem(projectId: string, claim: HostnameClaim, now: string): HostnameClaimItem {
  return {
    ...keys.functionHostname(claim.label),
    ...keys.functionHostOfProject(projectId, claim.label),
    type: 'function_host',
    project_id: projectId,
    name: claim.name,
    label: claim.label,
    claimed_at: now,
  };
}

/** The claim of a function hostname's label (consistent: a subdomain change is seen at once), or null. */
export function getHostnameClaim(label: string): Promise<HostnameClaimItem | null> {
  return getItem<HostnameClaimItem>(keys.functionHostname(label), true);
}

/** The condition every claim write carries: the label is free, or already this project's. */
export const CLAIMABLE = { expression: 'attribute_not_exists(pk) OR project_id = :claimant', value: ':claimant' } as const;

/** A project's claim of each function name under a subdomain. */
export const claimsFor = (names: Iterable<string>, subdomain: string): HostnameClaim[] =>
  [...new Set(names)].sort().map((name) => ({ name, label: functionLabel(name, subdomain) }));

/**
 * Claims each label for the project with a conditional write: the first project wins, the same project
 * claims again freely. Returns the labels another project holds.
 */
export async function claimFunctionHostnames(projectId: string, claims: HostnameClaim[]): Promise<string[]> {
  const taken: string[] = [];
  const now = new Date().toISOString();
  await Promise.all(
    claims.map(async (claim) => {
      try {
        await dynamo().send(
          new PutCommand({
            TableName: config.tableName(),
            Item: hostnameClaimItem(projectId, claim, now),
            ConditionExpression: CLAIMABLE.expression,
            ExpressionAttributeValues: { [CLAIMABLE.value]: projectId },
          }),
        );
      } catch (error) {
        if (!isConditionalCheckFailure(error)) throw error;
        taken.push(claim.label);
      }
    }),
  );
  return taken.sort();
}

/** The labels a project holds, by its index key (claims from before the key existed are not among them). */
export async function projectHostnameLabels(projectId: string): Promise<string[]> {
  const items = await queryAll<Pick<HostnameClaimItem, 'label'>>({
    TableName: config.tableName(),
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.functionHostOfProject(projectId, '').gsi1pk },
    ProjectionExpression: 'label',
  });
  return items.map((item) => item.label);
}

/** Releases labels the project holds; a label another project holds (or nobody) is left alone. */
export async function releaseFunctionHostnames(projectId: string, labels: Iterable<string>): Promise<void> {
  await Promise.all(
    [...new Set(labels)].map((label) =>
      dynamo()
        .send(
          new DeleteCommand({
            TableName: config.tableName(),
            Key: keys.functionHostname(label),
            ConditionExpression: 'project_id = :project',
            ExpressionAttributeValues: { ':project': projectId },
          }),
        )
        .catch((error: unknown) => {
          if (!isConditionalCheckFailure(error)) throw error;
        }),
    ),
  );
}

/** What a subdomain change adds to its transaction: each function's new claim and the release of its old one. */
export interface HostnameClaimMove {
  /** Transaction items: a Put per new label (claimable), a Delete per old label the project holds. */
  items: Write[];
  /** The new labels, in the order of their Puts at the start of `items`. */
  claims: HostnameClaim[];
}

/**
 * The claims of a project's functions (every name any deployment has: promote may make any live) moved from
 * one subdomain to another, as transaction items, so the subdomain and its function hostnames change together:
 * the functions answer at `{name}-{new}` as soon as the project is written, and `{name}-{old}` is free for
 * another project at the same moment. Refused when a new label would be over 63 characters, or when the
 * transaction could not hold them all (`maxItems`).
 */
export async function hostnameClaimMoves(projectId: string, from: string, to: string, maxItems: number): Promise<HostnameClaimMove> {
  const names = await listProjectFunctionNames(projectId);
  const claims = claimsFor(names, to);
  const tooLong = claims.filter((c) => c.label.length > MAX_FUNCTION_LABEL_LENGTH).map((c) => c.label);
  if (tooLong.length > 0) throw new ApiError(FUNCTION_HOSTNAME_TOO_LONG, { details: { subdomain: to, labels: tooLong } });
  const newLabels = new Set(claims.map((c) => c.label));
  // Only the old labels this project holds are released (one item may not be both written and deleted).
  const old = claimsFor(names, from).filter((c) => !newLabels.has(c.label));
  const held =
    old.length === 0
      ? []
      : await batchGetAll<Pick<HostnameClaimItem, 'label' | 'project_id'>>(
          old.map((c) => keys.functionHostname(c.label)),
          'label, project_id',
        );
  const release = held.filter((item) => item.project_id === projectId).map((item) => item.label);
  if (claims.length + release.length > maxItems) {
    throw new ApiError(SUBDOMAIN_CHANGE_TOO_MANY_FUNCTIONS, { details: { function_names: names.length, max: Math.floor(maxItems / 2) } });
  }
  const now = new Date().toISOString();
  const table = config.tableName();
  return {
    claims,
    items: [
      ...claims.map((claim) => ({
        Put: {
          TableName: table,
          Item: hostnameClaimItem(projectId, claim, now),
          ConditionExpression: CLAIMABLE.expression,
          ExpressionAttributeValues: { [CLAIMABLE.value]: projectId },
        },
      })),
      ...release.map((label) => ({
        Delete: {
          TableName: table,
          Key: keys.functionHostname(label),
          ConditionExpression: 'project_id = :claimant',
          ExpressionAttributeValues: { ':claimant': projectId },
        },
      })),
    ],
  };
}

/**
 * Releases every label the project holds but `keep` (its claims on subdomains it left, found by the index
 * key): after a subdomain change, the claims older code left behind; at deletion, all of them.
 */
export async function releaseProjectHostnames(
  projectId: string,
  keep: ReadonlySet<string> = new Set(),
  alsoLabels: Iterable<string> = [],
): Promise<void> {
  const labels = new Set([...(await projectHostnameLabels(projectId)), ...alsoLabels]);
  await releaseFunctionHostnames(
    projectId,
    [...labels].filter((label) => !keep.has(label)),
  );
}
