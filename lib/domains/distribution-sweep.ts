import {
  DeleteDistributionCommand,
  GetDistributionCommand,
  GetDistributionConfigCommand,
  ListDistributionsCommand,
  ListTagsForResourceCommand,
  UpdateDistributionCommand,
  type DistributionSummary,
} from '@aws-sdk/client-cloudfront';
import { cloudfront } from '../aws/cloudfront.ts';
import { logger } from '../logger.ts';
import { getDomainItem } from './records.ts';
import { DOMAIN_ID_TAG } from './tls-distribution.ts';

/**
 * The sweep of custom domains' CloudFront distributions (lib/domains/tls.ts makes one per verified domain,
 * tagged `slipway:domain-id`): a distribution whose domain no longer names it (the domain is gone or removed,
 * or names another distribution: a twin made by an attempt that raced) is taken down. One its live domain is
 * still provisioning, with none recorded yet, is being made: the attempt records it right after (and if the
 * attempt fails, the domain is `failed` and the next sweep takes it). CloudFront deletes only
 * a disabled distribution whose change is deployed, so one run disables it and a later run deletes it. A
 * distribution without the tag (the platform's own sites and functions distributions, anything else in the
 * account) is never touched.
 */

export interface DistributionSweepReport {
  examined: number;
  kept: number;
  disabled: string[];
  deleted: string[];
}

async function* distributions(): AsyncIterable<DistributionSummary> {
  let marker: string | undefined;
  do {
    const page = await cloudfront().send(new ListDistributionsCommand({ Marker: marker }));
    yield* page.DistributionList?.Items ?? [];
    marker = page.DistributionList?.IsTruncated ? page.DistributionList.NextMarker : undefined;
  } while (marker);
}

/** Whether the domain the tag names still names this distribution (or is making one now). */
async function isNamed(domainId: string, distributionId: string): Promise<boolean> {
  const domain = await getDomainItem(domainId);
  if (!domain || domain.deleted_at) return false;
  return domain.distribution_id === distributionId || (!domain.distribution_id && domain.ssl_status === 'provisioning');
}

/** One step of taking a distribution down: disable it, or delete it once disabled and deployed. */
async function retire(id: string): Promise<'disabled' | 'deleted' | 'waiting'> {
  const current = await cloudfront().send(new GetDistributionConfigCommand({ Id: id }));
  if (current.DistributionConfig!.Enabled) {
    const disabled = { ...current.DistributionConfig!, Enabled: false };
    await cloudfront().send(new UpdateDistributionCommand({ Id: id, IfMatch: current.ETag, DistributionConfig: disabled }));
    return 'disabled';
  }
  const state = await cloudfront().send(new GetDistributionCommand({ Id: id }));
  if (state.Distribution!.Status !== 'Deployed') return 'waiting';
  await cloudfront().send(new DeleteDistributionCommand({ Id: id, IfMatch: state.ETag }));
  return 'deleted';
}

/** Another writer got there first (a domain's own teardown, a second sweep): this run leaves it. */
const RACED = new Set(['NoSuchDistribution', 'PreconditionFailed', 'DistributionNotDisabled', 'InvalidIfMatchVersion']);

/** Takes down the tagged distributions no domain names. */
export async function sweepDomainDistributions(): Promise<DistributionSweepReport> {
  const report: DistributionSweepReport = { examined: 0, kept: 0, disabled: [], deleted: [] };
  for await (const summary of distributions()) {
    report.examined++;
    const id = summary.Id!;
    const tags = (await cloudfront().send(new ListTagsForResourceCommand({ Resource: summary.ARN! }))).Tags?.Items ?? [];
    const domainId = tags.find((tag) => tag.Key === DOMAIN_ID_TAG)?.Value;
    if (!domainId || (await isNamed(domainId, id))) {
      report.kept++;
      continue;
    }
    try {
      const step = await retire(id);
      if (step !== 'waiting') report[step].push(id);
      logger.info('sweep: a distribution no domain names', { distribution_id: id, domain_id: domainId, step });
    } catch (error) {
      if (!RACED.has((error as Error).name)) throw error;
    }
  }
  return report;
}
