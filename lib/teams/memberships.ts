/**
 * The former name of lib/teams/membership-records.ts, kept only for lib/functions/telemetry-report.ts while
 * the functions layout (issue 22, item 4) is being moved on another branch: import membership-records.ts instead.
 */
export { getTeamOwner } from './membership-records.ts';
