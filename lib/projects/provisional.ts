import { deleteOneTimeSchedule, setOneTimeSchedule } from '../aws/schedules.ts';
import { config } from '../config.ts';

/**
 * A project created by a direct upload is provisional until something
 * publishes; about 2 h 15 min after the last begin it is deleted. The delay is
 * configurable so tests can prove the expiry without waiting hours.
 */
export const provisionalExpirySeconds = () => config.provisionalExpirySeconds();

/** The variable through which this function learns the provisional-expiry worker's ARN (lib/workers.ts row). */
export const PROVISIONAL_EXPIRY_TARGET_ARN_ENV = 'PROVISIONAL_EXPIRY_TARGET_ARN';

export function provisionalExpiryScheduleName(projectId: string): string {
  return `provisional-${projectId}`;
}

export interface ProvisionalExpiryInput {
  project_id: string;
}

/**
 * (Re)sets the project's one-time expiry schedule to `until`. Each begin on a
 * provisional project moves it; the worker it targets re-checks the project,
 * so a stale or early firing deletes nothing that should live.
 */
export async function scheduleProvisionalExpiry(projectId: string, until: Date): Promise<void> {
  const input: ProvisionalExpiryInput = { project_id: projectId };
  await setOneTimeSchedule(provisionalExpiryScheduleName(projectId), until, PROVISIONAL_EXPIRY_TARGET_ARN_ENV, input);
}

/** Deletes the expiry schedule; one that is already gone is fine. */
export async function cancelProvisionalExpiry(projectId: string): Promise<void> {
  await deleteOneTimeSchedule(provisionalExpiryScheduleName(projectId));
}
