/**
 * The former name of lib/identity/user-records.ts, kept only for lib/functions/telemetry-report.ts while
 * the functions layout (issue 22, item 4) is being moved on another branch: import user-records.ts instead.
 */
export { getUser } from './user-records.ts';
