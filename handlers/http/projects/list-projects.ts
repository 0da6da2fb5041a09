import * as z from '../../../lib/schema.ts';
import { ApiError } from '../../../lib/errors/api-error.ts';
import { VALIDATION_FAILED } from '../../../lib/errors/catalogue/request.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { decodeCursor, listTeamProjects } from '../../../lib/projects/listing.ts';
import { keys } from '../../../lib/db/keys.ts';

const query = z.object({
  limit: z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(100)), 50),
  cursor: z.optional(z.string().check(z.maxLength(2048))),
});

export const handler = defineHandler('GET /api/v1/projects', { query }, async ({ team, query }) => {
  const teamId = team!.team.id;
  if (query.cursor !== undefined) {
    // A cursor is only ever a position in this team's own list.
    const key = decodeCursor(query.cursor);
    if (!key || key.gsi1pk !== keys.projectByTeam(teamId, '', '').gsi1pk) {
      throw new ApiError(VALIDATION_FAILED, {
        details: { fields: [{ field: 'query.cursor', message: 'Unknown cursor.', code: 'custom' }] },
      });
    }
  }
  const page = await listTeamProjects(teamId, { limit: query.limit, cursor: query.cursor });
  return { data: { projects: page.projects, next_cursor: page.nextCursor } };
});
