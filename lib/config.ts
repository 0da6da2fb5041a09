import { bucketDefinitions, queueDefinitions, scheduleGroupDefinition, tableDefinition } from './resources.ts';

/**
 * Runtime configuration, read from the environment on each call so that the
 * local platform and tests can point the same code at different resources.
 * Deployed Lambdas get these variables from the CDK stack.
 */
function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`Configuration variable ${name} is not set`);
  return value;
}

function optional(name: string, fallback: string): string {
  const value = process.env[name];
  return value === undefined || value === '' ? fallback : value;
}

export const config = {
  tableName: () => required(tableDefinition.envVar),
  bucket: (name: keyof typeof bucketDefinitions) => required(bucketDefinitions[name].envVar),
  queueUrl: (name: keyof typeof queueDefinitions) => required(queueDefinitions[name].envVar),
  scheduleGroup: () => required(scheduleGroupDefinition.envVar),
  schedulerRoleArn: () => required(scheduleGroupDefinition.roleEnvVar),
  /** Domain under which sites are served: {subdomain}.{siteDomain}. */
  siteDomain: () => optional('SITE_DOMAIN', 'slipway.site'),
  /** Domain under which functions are served: {name}-{subdomain}.{functionDomain}. */
  functionDomain: () => optional('FUNCTION_DOMAIN', 'fn.slipway.site'),
  /** Scheme of public site and function URLs (http only on the local platform). */
  publicScheme: () => optional('PUBLIC_SCHEME', 'https'),
  /** Port suffix of public URLs, e.g. ":3000" on the local platform. */
  publicPortSuffix: () => optional('PUBLIC_PORT_SUFFIX', ''),
  /** Browser origins allowed to call the API (the dashboard), comma separated. */
  corsOrigins: () =>
    optional('CORS_ORIGINS', '')
      .split(',')
      .map((o) => o.trim())
      .filter(Boolean),
  awsRegion: () => optional('AWS_REGION', 'us-east-1'),
  /** Set only when talking to a local AWS endpoint (moto or LocalStack). */
  awsEndpoint: () => process.env.AWS_ENDPOINT_URL || undefined,
};
