import * as z from '../../../lib/schema.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { teamProfile, updateTeamProfile } from '../../../lib/teams/teams.ts';

const body = z
  .strictObject({
    name: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(255))),
    slug: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(64))),
  })
  .check(z.refine((b) => b.name !== undefined || b.slug !== undefined, { message: 'Give a name or a slug to change.' }));

export const handler = defineHandler('PATCH /api/v1/team/profile', { body }, async ({ team, body }) => {
  const updated = await updateTeamProfile(team!.team, body);
  return { data: teamProfile(updated) };
});
