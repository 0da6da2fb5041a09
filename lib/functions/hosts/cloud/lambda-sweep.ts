import { DeleteFunctionCommand, ListFunctionsCommand, ListTagsCommand, type FunctionConfiguration } from '@aws-sdk/client-lambda';
import { lambda } from '../../../aws/lambda.ts';
import { config } from '../../../config.ts';
import { keys } from '../../../db/keys.ts';
import { queryAll } from '../../../db/query.ts';
import { logger } from '../../../logger.ts';
import { getProjectItem } from '../../../projects/records.ts';
import { functionLambdaName } from './lambda-package.ts';

/**
 * The sweep of user-function Lambdas (the cloud HTTPS door makes one per built bundle,
 * lib/functions/hosts/cloud/cloud-host.ts): a Lambda under the stack's prefix that no function record names any more
 * (its deployment, project or team deleted, or made by a request that raced a removal) is deleted.
 *
 * A Lambda is named when an active project's function record of some deployment has its function id and
 * bundle: promote may make any deployment live again, so only records decide. Its `slipway:project-id` tag
 * says which project's records to read (`slipway:team-id`, every project of the team, for a Lambda made
 * before projects were tagged); a Lambda with neither tag is not the platform's to judge and is left alone.
 */

export interface LambdaSweepReport {
  examined: number;
  kept: number;
  deleted: string[];
}

/** Lambda's `LastModified` (`2024-05-01T10:00:00.000+0000`) in epoch milliseconds. */
const modifiedAt = (fn: FunctionConfiguration) => Date.parse((fn.LastModified ?? '').replace(/([+-]\d\d)(\d\d)$/, '$1:$2'));

async function* functionsUnder(prefix: string): AsyncIterable<FunctionConfiguration> {
  let marker: string | undefined;
  do {
    const page = await lambda().send(new ListFunctionsCommand({ Marker: marker }));
    for (const fn of page.Functions ?? []) if (fn.FunctionName?.startsWith(prefix)) yield fn;
    marker = page.NextMarker;
  } while (marker);
}

/** The Lambda names a project's function records name; none when the project is gone or being deleted. */
async function namesOfProject(prefix: string, projectId: string): Promise<Set<string>> {
  const project = await getProjectItem(projectId, true);
  if (!project || project.status !== 'active') return new Set();
  const records = await queryAll({
    TableName: config.tableName(),
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.project(projectId).pk, ':prefix': 'FUNCTION#' },
    ProjectionExpression: 'function_id, bundle_sha256',
    ConsistentRead: true,
  });
  return new Set(records.map((record) => functionLambdaName(prefix, record as { function_id: string; bundle_sha256: string })));
}

async function projectsOfTeam(teamId: string): Promise<string[]> {
  const items = await queryAll<{ id: string }>({
    TableName: config.tableName(),
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.projectByTeam(teamId, '', '').gsi1pk },
    ProjectionExpression: 'id',
  });
  return items.map((item) => item.id);
}

/** Deletes the user-function Lambdas under `prefix` that no record names, leaving those younger than `minAgeMs`. */
export async function sweepFunctionLambdas(options: { prefix: string; minAgeMs: number; now?: number }): Promise<LambdaSweepReport> {
  const now = options.now ?? Date.now();
  const byProject = new Map<string, Promise<Set<string>>>();
  const named = (projectId: string) => {
    let names = byProject.get(projectId);
    if (!names) byProject.set(projectId, (names = namesOfProject(options.prefix, projectId)));
    return names;
  };
  const report: LambdaSweepReport = { examined: 0, kept: 0, deleted: [] };
  for await (const fn of functionsUnder(options.prefix)) {
    report.examined++;
    const name = fn.FunctionName!;
    if (!(now - modifiedAt(fn) >= options.minAgeMs)) {
      report.kept++;
      continue;
    }
    const tags = (await lambda().send(new ListTagsCommand({ Resource: fn.FunctionArn! }))).Tags ?? {};
    const projectId = tags['slipway:project-id'];
    const teamId = tags['slipway:team-id'];
    if (!projectId && !teamId) {
      report.kept++;
      continue;
    }
    const projects = projectId ? [projectId] : await projectsOfTeam(teamId!);
    const names = await Promise.all(projects.map(named));
    if (names.some((set) => set.has(name))) {
      report.kept++;
      continue;
    }
    try {
      await lambda().send(new DeleteFunctionCommand({ FunctionName: name }));
    } catch (error) {
      if ((error as Error).name !== 'ResourceNotFoundException') throw error;
    }
    const swept = { function_name: name, project_id: projectId ?? null, team_id: teamId ?? null };
    logger.info('swept a user-function Lambda no record names', swept);
    report.deleted.push(name);
  }
  return report;
}
