import { config } from '../../lib/config.ts';
import { sweepDomainDistributions, type DistributionSweepReport } from '../../lib/domains/distribution-sweep.ts';
import { sweepFunctionLambdas, type LambdaSweepReport } from '../../lib/functions/hosts/cloud/lambda-sweep.ts';
import { sweepTailQueues, type TailQueueSweepReport } from '../../lib/functions/tail.ts';
import { logger } from '../../lib/logger.ts';

/**
 * Target of the recurring schedule (row `cloud-sweep` of lib/workers.ts): removes the cloud resources no record
 * names any more, user-function Lambdas (where the stack runs them: FUNCTIONS_LAMBDA_PREFIX), custom domains'
 * distributions, and the queues of live tails whose watcher went without closing them. Each sweep goes on when
 * another fails; a failure is thrown after all ran, for the schedule's retry.
 */
export const handler = async (): Promise<{
  lambdas: LambdaSweepReport | null;
  distributions: DistributionSweepReport | null;
  tails: TailQueueSweepReport | null;
}> => {
  const minAgeMs = config.sweepMinAgeSeconds() * 1000;
  const prefix = config.functionsLambdaPrefix();
  const [lambdas, distributions, tails] = await Promise.allSettled([
    prefix ? sweepFunctionLambdas({ prefix, minAgeMs }) : Promise.resolve(null),
    sweepDomainDistributions(),
    sweepTailQueues(),
  ]);
  const result = {
    lambdas: lambdas.status === 'fulfilled' ? lambdas.value : null,
    distributions: distributions.status === 'fulfilled' ? distributions.value : null,
    tails: tails.status === 'fulfilled' ? tails.value : null,
  };
  logger.info('cloud sweep', { lambdas: result.lambdas, distributions: result.distributions, tails: result.tails });
  const failed = [lambdas, distributions, tails].find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failed) throw failed.reason;
  return result;
};
