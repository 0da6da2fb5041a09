import { toProject, type Project } from './projects.ts';
import { queryTeamProjectItems } from './records.ts';

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

function encodeCursor(key: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

export function decodeCursor(cursor: string): Record<string, unknown> | undefined {
  try {
    const key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (typeof key === 'object' && key !== null && !Array.isArray(key)) return key as Record<string, unknown>;
  } catch {
    // fall through
  }
  return undefined;
}
