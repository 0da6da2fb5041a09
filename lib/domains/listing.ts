import { toDomain, type Domain } from './domains.ts';
import { projectDomainItems } from './records.ts';

/** A project's domains, oldest first, from the project's index partition (removed ones have left it). */
export async function listProjectDomains(projectId: string): Promise<Domain[]> {
  return (await projectDomainItems(projectId)).filter((item) => !item.deleted_at).map(toDomain);
}
