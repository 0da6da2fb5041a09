import { deletePrefix } from '../aws/s3-prefixes.ts';
import { config } from '../config.ts';
import { claimsFor, releaseProjectHostnames } from './hostname-claim-records.ts';
import { deleteProjectInvocations } from './invocations.ts';
import { deleteProjectSchedules } from './schedules.ts';

/**
 * What a deleted project's functions hold outside its partition (lib/lifecycle/project-deletion.ts): hostname
 * claims, Scheduler schedules, queued invocations and their stored bodies, bundles. Safe to run again.
 */
export async function purgeProjectFunctions(project: { id: string; teamId: string; subdomain: string }, functionNames: string[]) {
  // Every hostname label the project holds (its index key), and those of its functions on its current subdomain
  // (claims written before they carried the index key): another project may take them at once.
  const current = claimsFor(functionNames, project.subdomain).map((c) => c.label);
  await releaseProjectHostnames(project.id, new Set(), current);
  // Its functions' Scheduler schedules: none is left to tick (their records go with the partition after this).
  await deleteProjectSchedules(project.id);
  // Its queued invocations: records, stored requests, results and console output (not left to their TTL).
  await deleteProjectInvocations(project.id, functionNames);
  await deletePrefix(config.bucket('bundles'), `functions/${project.teamId}/${project.id}/`);
}
