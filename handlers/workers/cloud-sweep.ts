import { config } from '../../lib/config.ts';
import { sweepDomainDistributions, type DistributionSweepReport } from '../../lib/domains/distribution-sweep.ts';
import { sweepFunctionLambdas, type LambdaSweepReport } from '../../lib/functions/hosts/cloud/lambda-sweep.ts';
import { logger } from '../../lib/logger.ts';

/**
 * Target of the recurring schedule (row `cloud-sweep` of lib/workers.ts): removes the cloud resources no record
 * names any more, user-function Lambdas (where the stack runs them: FUNCTIONS_LAMBDA_PREFIX) and custom domains'
 * distributions. Each sweep goes on when the other fails; a failure is thrown after both ran, for the schedule's retry.
 */
export const handler = async (): Promise<{ lambdas: LambdaSweepReport | null; distributions: DistributionSweepReport | null }> => {
  const minAgeMs = config.sweepMinAgeSeconds() * 1000;
  const prefix = config.functionsLambdaPrefix();
  const [lambdas, distributions] = await Promise.allSettled([
    prefix ? sweepFunctionLambdas({ prefix, minAgeMs }) : Promise.resolve(null),
    sweepDomainDistributions(),
  ]);
  const result = {
    lambdas: lambdas.status === 'fulfilled' ? lambdas.value : null,
    distributions: distributions.status === 'fulfilled' ? distributions.value : null,
  };
  logger.info('cloud sweep', { lambdas: result.lambdas, distributions: result.distributions });
  const failed = [lambdas, distributions].find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failed) throw failed.reason;
  return result;
};
