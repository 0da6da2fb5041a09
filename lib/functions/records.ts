import { createHash } from 'node:crypto';
import { config } from '../config.ts';
import { keys } from '../db/keys.ts';
import { queryAll } from '../db/query.ts';
import { functionLabel, type FunctionRecord } from './model.ts';
import type { ProjectItem } from '../projects/records.ts';
import { getItem, type Stored } from '../db/item.ts';

/**
 * The function records of deployments (`PROJECT#{id}` / `FUNCTION#{deployment_id}#{name}`),
 * written by the build at publish and read by the door and the API.
 */

/**
 * A function's id, stable per project and name across deployments (telemetry
 * groups by it): a name-based UUID (version 5 layout) of the project id and
 * the name, so no item has to remember it.
 */
export function functionIdFor(projectId: string, name: string): string {
  const bytes = createHash('sha1').update(`slipway-function:${projectId}:${name}`).digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const RECORD_FIELDS = [
  'function_id',
  'name',
  'project_id',
  'team_id',
  'deployment_id',
  'entry_path',
  'bundle_key',
  'bundle_sha256',
  'bundle_bytes',
  'created_at',
  'schedule',
] as const;

/** A function's item: its record, stored under its deployment (a record older than schedules has none). */
export type FunctionItem = Stored<Omit<FunctionRecord, 'schedule'> & { type: 'function'; schedule?: FunctionRecord['schedule'] }>;

export function toFunctionRecord(item: FunctionItem): FunctionRecord {
  // Records built before schedules were read have none.
  return { ...Object.fromEntries(RECORD_FIELDS.map((field) => [field, item[field]])), schedule: item.schedule ?? null } as FunctionRecord;
}

/** One function of one deployment, or null. */
export async function getFunctionRecord(projectId: string, deploymentId: string, name: string): Promise<FunctionRecord | null> {
  const item = await getItem<FunctionItem>(keys.function(projectId, deploymentId, name), true);
  return item ? toFunctionRecord(item) : null;
}

/** Every function of one deployment, sorted by name. */
export async function listFunctionRecords(projectId: string, deploymentId: string): Promise<FunctionRecord[]> {
  const prefix = keys.functionPrefix(projectId, deploymentId);
  const items = await queryAll<FunctionItem>({
    TableName: config.tableName(),
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': prefix.pk, ':prefix': prefix.skPrefix },
    ConsistentRead: true,
  });
  return items.map(toFunctionRecord).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The name of every function any deployment of the project has (promote may make any of them live). */
export async function listProjectFunctionNames(projectId: string): Promise<string[]> {
  const items = await queryAll<Pick<FunctionItem, 'name'>>({
    TableName: config.tableName(),
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.project(projectId).pk, ':prefix': 'FUNCTION#' },
    ExpressionAttributeNames: { '#name': 'name' },
    ProjectionExpression: '#name',
    ConsistentRead: true,
  });
  return [...new Set(items.map((item) => item.name))].sort();
}

/** Where a function answers: `{scheme}://{name}-{subdomain}.{function_domain}{port}/`. */
export function functionUrl(name: string, subdomain: string): string {
  return `${config.publicScheme()}://${functionLabel(name, subdomain)}.${config.functionDomain()}${config.publicPortSuffix()}/`;
}

/** The API view of one function of the live deployment. */
export interface FunctionView {
  id: string;
  name: string;
  url: string;
  deployment_id: string;
  entry_path: string;
  bundle_bytes: number;
  created_at: string;
  /** The function's schedule (a five-field cron in UTC or a macro), or null. */
  schedule: string | null;
}

/** GET /api/v1/projects/{id}/functions: the live deployment's functions, by name; empty when nothing is live. */
export async function listLiveFunctions(project: ProjectItem): Promise<FunctionView[]> {
  const live = project.live_deployment_id;
  if (!live) return [];
  const records = await listFunctionRecords(project.id, live);
  return records.map((record) => ({
    id: record.function_id,
    name: record.name,
    url: functionUrl(record.name, project.subdomain),
    deployment_id: record.deployment_id,
    entry_path: record.entry_path,
    bundle_bytes: record.bundle_bytes,
    created_at: record.created_at,
    schedule: record.schedule ?? null,
  }));
}
