import { indexDeployment, unindexedDeployments } from './records.ts';
import { type PageKey } from '../db/item.ts';

/**
 * Operator command `admin backfill-deployments-index`: gives each deployment
 * made before the project's deployments index existed its index keys, so the
 * listing (GET /api/v1/projects/{id}/deployments) shows it. It scans the
 * table, which is why it is an operator command and never on a request path;
 * each write is conditional on the keys still missing, so a second run or a
 * racing one changes nothing.
 */
export async function backfillDeploymentsIndex(): Promise<{ indexed: number }> {
  let indexed = 0;
  let start: PageKey | undefined;
  do {
    const page = await unindexedDeployments(start);
    start = page.next;
    for (const item of page.items) if (await indexDeployment(item)) indexed++;
  } while (start);
  return { indexed };
}
