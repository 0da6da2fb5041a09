import { logger } from '../../lib/logger.ts';
import { purgeTeam, type TeamPurgeInput } from '../../lib/lifecycle/team-deletion.ts';

/** Target of the one-time schedule set at a team's deletion request (and when a hold on an overdue team is lifted). */
export const handler = async (event: TeamPurgeInput): Promise<{ team_id: string; outcome: string }> => {
  const outcome = await purgeTeam(event.team_id);
  logger.info('team purge', { team_id: event.team_id, outcome });
  return { team_id: event.team_id, outcome };
};
