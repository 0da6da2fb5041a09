import type { PermissionUsage } from './iam/iam-proxy.ts';

/**
 * Least privilege as a figure: per Lambda that made AWS calls, the actions it
 * used and the grants of its role it never used, and every refusal. The log
 * writes are the Lambda service's, not the handler's, so they are never used here.
 */
export function permissionReport(usage: PermissionUsage[]): string {
  const lines = ['', 'AWS permissions of the synthesized template, per Lambda (used / held but not used):'];
  for (const entry of [...usage].sort((a, b) => a.functionName.localeCompare(b.functionName))) {
    if (entry.actionsUsed.length === 0 && entry.denied.length === 0) continue;
    const unused = entry.grantsUnused.filter((action) => !action.startsWith('logs:'));
    lines.push(`  ${entry.functionName}`);
    lines.push(`    used:   ${entry.actionsUsed.join(' ') || '-'}`);
    lines.push(`    unused: ${unused.join(' ') || '-'}`);
    for (const denial of entry.denied) lines.push(`    DENIED: ${denial.message}`);
  }
  const idle = usage.filter((entry) => entry.actionsUsed.length === 0 && entry.denied.length === 0).length;
  lines.push(`  (${idle} Lambdas made no AWS call in this run)`, '');
  return lines.join('\n');
}
