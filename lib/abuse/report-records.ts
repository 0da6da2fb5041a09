import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { keys } from '../db/keys.ts';
import { transact } from '../db/transact.ts';
import type { HostedTarget } from './hosts.ts';

/**
 * The records of abuse reports: the report (in the admin queue by arrival), and one item per project
 * it names, so a project's reports are read by key; all written in one transaction.
 */

export interface NewReport {
  id: string;
  category: string;
  description: string;
  targets: HostedTarget[];
  projectIds: string[];
  reporterName: string | null;
  reporterEmail: string | null;
  createdAt: string;
}

export async function insertReport(r: NewReport): Promise<void> {
  const report = {
    ...keys.abuseReport(r.id),
    ...keys.abuseReportQueue(r.createdAt, r.id),
    type: 'abuse_report',
    id: r.id,
    category: r.category,
    description: r.description,
    reported_urls: r.targets.map((t) => t.url),
    targets: r.targets.map(({ url, hostname, kind, project_id, team_id }) => ({ url, hostname, kind, project_id, team_id })),
    project_ids: r.projectIds,
    reporter_name: r.reporterName,
    reporter_email: r.reporterEmail,
    good_faith_declared: true,
    status: 'received',
    receipt_status: r.reporterEmail ? 'pending' : 'not_requested',
    created_at: r.createdAt,
  };
  const ofProject = (projectId: string) => ({
    ...keys.abuseReportOfProject(projectId, r.id),
    type: 'abuse_report_of_project',
    report_id: r.id,
    project_id: projectId,
    category: r.category,
    status: 'received',
    created_at: r.createdAt,
  });
  await transact([
    { name: 'report', write: { Put: { Item: report, ConditionExpression: 'attribute_not_exists(pk)' } } },
    ...r.projectIds.map((projectId) => ({ name: `project:${projectId}`, write: { Put: { Item: ofProject(projectId) } } })),
  ]);
}

/** What became of the reporter's receipt. */
export async function writeReceiptStatus(reportId: string, status: string): Promise<void> {
  await dynamo().send(
    new UpdateCommand({
      TableName: config.tableName(),
      Key: keys.abuseReport(reportId),
      UpdateExpression: 'SET receipt_status = :status, receipt_at = :at',
      ExpressionAttributeValues: { ':status': status, ':at': new Date().toISOString() },
    }),
  );
}
