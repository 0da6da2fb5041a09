import { toProject, type Project } from './projects.ts';
import { queryTeamProjectItems } from './records.ts';
import type { PageKey } from '../db/item.ts';

/** A team's projects, newest first, from the team's index partition (never a scan). */
export async function listTeamProjects(
  teamId: string,
  options: { limit: number; cursor?: string },
): Promise<{ projects: Project[]; nextCursor: string | null }> {
  const page = await queryTeamProjectItems(teamId, {
    limit: options.limit,
    startKey: options.cursor ? decodeCursor(options.cursor) : undefined,
  });
  return { projects: page.items.map(toProject), nextCursor: page.lastKey ? encodeCursor(page.lastKey) : null };
}

function encodeCursor(key: PageKey): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

/** The index page key a cursor encodes: exactly the four key strings a page of the team's index ends on, else undefined. */
export function decodeCursor(cursor: string): PageKey | undefined {
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof key !== 'object' || key === null || Array.isArray(key)) return undefined;
  const entries = Object.entries(key);
  const names = ['gsi1pk', 'gsi1sk', 'pk', 'sk'];
  if (entries.length !== names.length || !entries.every(([name, value]) => names.includes(name) && typeof value === 'string'))
    return undefined;
  return key as PageKey;
}
