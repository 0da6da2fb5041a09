import { randomBytes } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { isTransactionCanceled } from '../db/errors.ts';
import { getItem, type Stored } from '../db/item.ts';
import { keys } from '../db/keys.ts';
import { PREVIEW_SLUG_MAX } from './preview-hosts.ts';
import type { ProjectItem } from '../projects/records.ts';

/**
 * Previews: each project's `preview_slug` is claimed platform-wide by a hold
 * item (a transaction with the project, like subdomains), and each preview
 * label of a project (a branch's, a merge request's) names the deployment it
 * serves. Serving reads the hold, then the project, then the label's item.
 */

/** Transaction items that move a project's preview_slug claim from `from` to `to` (PATCH settings). */
export function previewSlugMoveItems(projectId: string, teamId: string, from: string | null, to: string) {
  const table = config.tableName();
  return [
    {
      Put: {
        TableName: table,
        Item: { ...keys.previewSlugHold(to), type: 'preview_slug_hold', slug: to, project_id: projectId, team_id: teamId },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    ...(from
      ? [
          {
            Delete: {
              TableName: table,
              Key: keys.previewSlugHold(from),
              ConditionExpression: 'project_id = :project',
              ExpressionAttributeValues: { ':project': projectId },
            },
          },
        ]
      : []),
  ];
}

/** A fresh slug for a project: its subdomain's letters and digits, and six random ones. */
function slugCandidate(subdomain: string): string {
  const base = subdomain.replace(/[^a-z0-9]/g, '').slice(0, PREVIEW_SLUG_MAX - 6);
  return `${base}${randomBytes(6)
    .toString('hex')
    .replace(/[^a-z0-9]/g, '')
    .slice(0, 6)}`.padEnd(3, '0');
}

/**
 * The project's preview_slug, given one first if it has none: the hold and the
 * project's field in one transaction, the field only if still unset, so two
 * first previews racing settle on one slug.
 */
export async function ensurePreviewSlug(project: ProjectItem): Promise<string> {
  if (typeof project.preview_slug === 'string' && project.preview_slug) return project.preview_slug;
  const table = config.tableName();
  const projectId = project.id;
  for (let attempt = 0; attempt < 5; attempt++) {
    const slug = slugCandidate(project.subdomain);
    try {
      await dynamo().send(
        new TransactWriteCommand({
          TransactItems: [
            ...previewSlugMoveItems(projectId, project.team_id, null, slug),
            {
              Update: {
                TableName: table,
                Key: keys.project(projectId),
                UpdateExpression: 'SET preview_slug = :slug',
                ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(preview_slug) OR preview_slug = :null)',
                ExpressionAttributeValues: { ':slug': slug, ':null': null },
              },
            },
          ],
        }),
      );
      return slug;
    } catch (error) {
      if (!isTransactionCanceled(error)) throw error;
      const current = (await dynamo().send(new GetCommand({ TableName: table, Key: keys.project(projectId), ConsistentRead: true }))).Item;
      if (typeof current?.preview_slug === 'string' && current.preview_slug) return current.preview_slug;
    }
  }
  throw new Error(`no preview slug could be claimed for project ${projectId}`);
}

/** A preview slug's platform-wide hold: which project it names. */
type PreviewSlugHoldItem = Stored<{ type: 'preview_slug_hold'; slug: string; project_id: string; team_id: string }>;

/** A preview label of a project and the deployment it serves (the item is deleted when taken down). */
type PreviewItem = Stored<{
  type: 'preview';
  label: string;
  deployment_id: string;
  branch: string;
  merge_request: number | null;
  updated_at: string;
}>;

export async function projectIdForPreviewSlug(slug: string): Promise<string | null> {
  const hold = await getItem<PreviewSlugHoldItem>(keys.previewSlugHold(slug), true);
  return hold?.project_id ?? null;
}

/** The deployment a preview label serves, or null when it has none (never built, or taken down). */
export async function previewDeployment(projectId: string, label: string): Promise<string | null> {
  const item = await getItem<PreviewItem>(keys.preview(projectId, label), true);
  return item?.deployment_id ?? null;
}

/** Points a preview label at a ready deployment. */
export async function setPreview(input: {
  projectId: string;
  label: string;
  deploymentId: string;
  branch: string;
  mergeRequest: number | null;
}): Promise<void> {
  await dynamo().send(
    new PutCommand({
      TableName: config.tableName(),
      Item: {
        ...keys.preview(input.projectId, input.label),
        type: 'preview',
        label: input.label,
        deployment_id: input.deploymentId,
        branch: input.branch,
        merge_request: input.mergeRequest,
        updated_at: new Date().toISOString(),
      } satisfies PreviewItem,
    }),
  );
}

/** Takes a preview down: its host answers 404 from now on. */
export async function takeDownPreview(projectId: string, label: string): Promise<void> {
  await dynamo().send(new DeleteCommand({ TableName: config.tableName(), Key: keys.preview(projectId, label) }));
}
