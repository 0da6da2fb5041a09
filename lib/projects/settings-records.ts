import { keys } from '../db/keys.ts';
import type { NamedWrite } from '../db/transact.ts';
import { holdItem, nameHoldItem, type ProjectItem } from './records.ts';
import type { ExpressionValues } from '../db/item.ts';

/**
 * The writes of a project's settings save (lib/project-setup/settings.ts): the project item's fields, on the
 * conditions of the values read, and the moves of its name and subdomain holds.
 */

/** The fields a settings save assigns, and the values it read (conditions: the save lost to nobody). */
export interface SettingsUpdate {
  set: string[];
  remove: string[];
  names: Record<string, string>;
  values: ExpressionValues;
  conditions: string[];
}

/** A settings save of an active project (`project`): assigns `update`, on the conditions it names. */
export function saveSettings(projectId: string, update: SettingsUpdate): NamedWrite {
  return {
    name: 'project',
    write: {
      Update: {
        Key: keys.project(projectId),
        UpdateExpression: `SET ${update.set.join(', ')}${update.remove.length > 0 ? ` REMOVE ${update.remove.join(', ')}` : ''}`,
        ConditionExpression: ['#status = :active', ...update.conditions].join(' AND '),
        ExpressionAttributeNames: { '#status': 'status', ...update.names },
        ExpressionAttributeValues: { ':active': 'active', ...update.values },
      },
    },
  };
}

/** The team's name hold moves to a new name (`name`); the old one is dropped unless only its case changed. */
export function moveNameHold(project: ProjectItem, newName: string): NamedWrite[] {
  const teamId = project.team_id;
  const projectId = project.id;
  const held = {
    ConditionExpression: 'attribute_not_exists(pk) OR project_id = :project',
    ExpressionAttributeValues: { ':project': projectId },
  };
  const writes: NamedWrite[] = [{ name: 'name', write: { Put: { Item: nameHoldItem(teamId, newName, projectId), ...held } } }];
  if (newName.toLowerCase() !== project.name.toLowerCase()) {
    writes.push({ name: 'old_name', write: { Delete: { Key: keys.projectName(teamId, project.name), ...held } } });
  }
  return writes;
}

/** The global subdomain hold moves to a new subdomain (`subdomain`: taken by another project when it fails). */
export function moveSubdomainHold(project: ProjectItem, newSubdomain: string): NamedWrite[] {
  const projectId = project.id;
  return [
    {
      name: 'subdomain',
      write: {
        Put: {
          Item: holdItem({ subdomain: newSubdomain, id: projectId }, project.team_id),
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
    },
    {
      name: 'old_subdomain',
      write: {
        Delete: {
          Key: keys.subdomainHold(project.subdomain),
          ConditionExpression: 'project_id = :project',
          ExpressionAttributeValues: { ':project': projectId },
        },
      },
    },
  ];
}
