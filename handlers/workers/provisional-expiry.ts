import { logger } from '../../lib/logger.ts';
import { expireProvisionalProject } from '../../lib/lifecycle/project-expiry.ts';
import type { ProvisionalExpiryInput } from '../../lib/projects/provisional.ts';

/** Target of the one-time EventBridge Scheduler schedule set by each begin on a provisional project. */
export const handler = async (event: ProvisionalExpiryInput): Promise<{ project_id: string; outcome: string }> => {
  const outcome = await expireProvisionalProject(event.project_id);
  logger.info('provisional expiry', { project_id: event.project_id, outcome });
  return { project_id: event.project_id, outcome };
};
