import * as z from '../../../lib/schema.ts';
import { ApiError } from '../../../lib/errors/api-error.ts';
import { VALIDATION_FAILED } from '../../../lib/errors/catalogue/request.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { loadProjectForCaller } from '../../../lib/projects/access.ts';
import { dayOf, readProjectAnalytics } from '../../../lib/sites/analytics.ts';

/** A calendar day, `YYYY-MM-DD` (UTC), that exists. */
const day = z.string().check(
  z.regex(/^\d{4}-\d{2}-\d{2}$/, 'Use YYYY-MM-DD.'),
  z.refine((value) => !Number.isNaN(Date.parse(value)) && dayOf(new Date(Date.parse(value))) === value, 'Not a calendar day.'),
);

const query = z.object({ from: z.optional(day), to: z.optional(day) });

/** The longest range one request reads, both ends included. */
export const MAX_ANALYTICS_DAYS = 90;
const DEFAULT_DAYS = 7;

export const handler = defineHandler('GET /api/v1/projects/{id}/analytics', { query }, async (ctx) => {
  const { item } = await loadProjectForCaller(ctx, ctx.params.id!);
  const to = ctx.query.to ?? dayOf(new Date());
  const from = ctx.query.from ?? dayOf(new Date(Date.parse(to) - (DEFAULT_DAYS - 1) * 86_400_000));
  const days = (Date.parse(to) - Date.parse(from)) / 86_400_000 + 1;
  if (days < 1 || days > MAX_ANALYTICS_DAYS) {
    throw new ApiError(VALIDATION_FAILED, {
      details: {
        fields: [
          {
            field: 'query.to',
            message:
              days < 1 ? '`to` is before `from`.' : `The range is ${days} days; at most ${MAX_ANALYTICS_DAYS} days can be read at once.`,
            code: 'custom',
          },
        ],
      },
    });
  }
  const analytics = await readProjectAnalytics(item.id, from, to);
  return { data: { analytics_enabled: item.analytics_enabled !== false, ...analytics } };
});
