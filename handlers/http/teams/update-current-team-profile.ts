import * as z from 'zod';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { teamProfile, updateTeamProfile } from '../../../lib/teams/teams.ts';

const body = z
  .object({
    name: z.string().trim().min(1).max(255).optional(),
    slug: z.string().trim().min(1).max(64).optional(),
  })
  .strict()
  .refine((b) => b.name !== undefined || b.slug !== undefined, { message: 'Give a name or a slug to change.' });

export const handler = defineHandler('PATCH /api/v1/team/profile', { body }, async ({ team, body }) => {
  const updated = await updateTeamProfile(team!.team, body);
  return { data: teamProfile(updated) };
});
