import { childPath } from '../../lib/sandbox/capabilities.ts';
import { cpSync, existsSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { resolveString, type LocalStackValues } from '../template/intrinsics.ts';
import type { SynthLambda } from './lambda-host.ts';
import { resourcesOfType, type SynthesizedTemplate } from '../template/template.ts';
import { localConfig } from '../../lib/local-config.ts';
import { platformEnv } from '../../lib/config.ts';

/**
 * Deployment settings (cdk context) that the local platform answers with its
 * own values, because its hosts are on loopback: the template's value of
 * each is replaced in every Lambda's environment.
 */
export const localSettingVariables = [
  'SITE_DOMAIN',
  'FUNCTION_DOMAIN',
  'CORS_ORIGINS',
  // The console the platform serves (app.localhost:{port}): the links Lambdas mail and the one origin whose
  // cookie-authenticated writes they take; the template's is the deployed console's.
  'CONSOLE_URL',
  'EMAIL_CONFIRM_URL',
  'ABUSE_INTAKE',
  'ABUSE_REPORTS_PER_SUBMITTER_PER_HOUR',
  'ABUSE_REPORTS_PLATFORM_PER_HOUR',
  // The queued door's warm pool (its size is the template's `functionsWarmTasks`): a bench compares sizes in one run.
  'FUNCTIONS_WARM_TASKS',
] as const;

/**
 * Variables the template never sets, which exist for a platform on loopback
 * (plain http, a port) or shorten waits in tests; a Lambda gets each that the
 * platform's own environment has when the Lambda's environment starts.
 */
export const localTuningVariables = [
  'PUBLIC_SCHEME',
  'PUBLIC_PORT_SUFFIX',
  'LOG_LEVEL',
  'DNS_RESOLVER',
  'DNS_TIMEOUT_MS',
  'SSO_ALLOW_LOOPBACK_HTTP',
  'SSO_DISCOVERY_TIMEOUT_MS',
  'SSO_REDIRECT_URI',
  'SSL_CHECK_INTERVAL_SECONDS',
  'SSL_MAX_ATTEMPTS',
  'SSL_RETRY_BASE_DELAY_SECONDS',
  'SSL_RETRY_MAX_DELAY_SECONDS',
  'SSL_VALIDATION_TIMEOUT_SECONDS',
  'GEO_COUNTRY_HEADER',
  'SCREENSHOT_CAPTURE',
  'UPLOAD_SESSION_SECONDS',
  'TEAM_PURGE_DELAY_SECONDS',
  'PROVISIONAL_EXPIRY_SECONDS',
  'SITE_ANALYTICS_FLUSH_MS',
  'FUNCTIONS_TELEMETRY_FLUSH_MS',
  'FUNCTIONS_BUDGET_MS',
  'FUNCTIONS_ROUTE_CACHE_MS',
  'FUNCTIONS_TAIL_CACHE_MS',
  'FUNCTIONS_QUEUED_RATE_PER_MINUTE',
  'FUNCTIONS_TASK_START_TIMEOUT_MS',
  'FUNCTIONS_TASK_POLL_MS',
  'FUNCTIONS_CALLBACK_ALLOW_LOOPBACK',
  'FUNCTIONS_CALLBACK_RETRY_DELAYS_SECONDS',
  'FUNCTIONS_CALLBACK_TIMEOUT_MS',
  'GIT_APP_INSTALL_URL',
  'DOCS_BASE_URL',
  'FINALIZE_BUDGET_MS',
  'FINALIZE_COPY_CHUNK',
  'IDEMPOTENCY_WAIT_MS',
  // The local mail outbox (lib/local/mail-outbox.ts), which passes SES calls on to the IAM proxy.
  'SES_ENDPOINT_URL',
  'GIT_ALLOW_LOOPBACK_HTTP',
] as const;

/**
 * The local variables as the platform's environment has them now: a test
 * that tunes one mid-file (a shorter purge delay, another DNS resolver) reaches
 * the Lambdas' next invocation, as the source mode reads them at call time.
 * A setting the platform does not set keeps the template's value; a tuning
 * variable it unset is unset.
 */
export function localOverlay(): Record<string, string | null> {
  const overlay: Record<string, string | null> = {};
  Object.assign(overlay, localConfig.setVariables(localSettingVariables));
  for (const name of localTuningVariables) overlay[name] = localConfig.variable(name) ?? null;
  return overlay;
}

/** localOverlay as the platform starting now has it, whichever call later starts an environment (lib/config.ts). */
export function platformOverlay(): () => Record<string, string | null> {
  const platform = platformEnv();
  return () => platform.run(localOverlay);
}

/**
 * A copy of an asset outside the repository, as Lambda has it in /var/task:
 * cdk.out lies inside the repository, where Node would find the repository's
 * node_modules above the asset and hide an import the bundle left out. Asset
 * folders are named by their content hash, so a copy made once serves every run.
 */
export function stagedAsset(assetDir: string): string {
  const target = join(tmpdir(), 'slipway-lambda-assets', basename(assetDir));
  if (existsSync(target)) return target;
  const partial = `${target}.${process.pid}.partial`;
  cpSync(assetDir, partial, { recursive: true });
  try {
    renameSync(partial, target);
  } catch (error) {
    // Another platform staged it first.
    rmSync(partial, { recursive: true, force: true });
    if (!existsSync(target)) throw error;
  }
  return target;
}

/**
 * The access key a Lambda's credentials carry: it names the Lambda, which is how the IAM proxy knows the
 * caller and its role. One key per Lambda, not per role: the API's routes share roles (infra/functions.ts
 * SharedExecution), and the permission report is per Lambda.
 */
export const accessKeyIdOf = (functionName: string) => `LOCALFN${functionName}`;

export interface TemplateLambdas {
  lambdas: SynthLambda[];
  /** Lambdas the platform cannot run here (container images), with why. */
  skipped: { logicalId: string; reason: string }[];
}

function roleOf(logicalId: string, role: unknown): string {
  const getAtt = (role as { 'Fn::GetAtt'?: string[] })?.['Fn::GetAtt'];
  if (!getAtt) throw new Error(`Lambda ${logicalId}: its Role is not a role of the template`);
  return getAtt[0]!;
}

/**
 * Every AWS::Lambda::Function of the template with its asset folder, handler,
 * timeout, memory and resolved environment. `rename` rewrites names the
 * platform prefixed (provision.ts); `local` adds the platform's variables.
 */
export function templateLambdas(
  template: SynthesizedTemplate,
  values: LocalStackValues,
  rename: (text: string) => string,
  local: (fn: { name: string; arn: string; roleLogicalId: string; memoryMb: number; assetDir: string }) => Record<string, string>,
): TemplateLambdas {
  const lambdas: SynthLambda[] = [];
  const skipped: TemplateLambdas['skipped'] = [];
  for (const [logicalId, resource] of resourcesOfType(template, 'AWS::Lambda::Function')) {
    const props = resource.Properties ?? {};
    const assetPath = resource.Metadata?.['aws:asset:path'];
    if (props.PackageType === 'Image' || props.Code?.ImageUri) {
      skipped.push({ logicalId, reason: 'a container image (built by Docker at deploy), which this machine cannot build or run' });
      continue;
    }
    // CDK's own handlers may be Python (the console's BucketDeployment); the local platform does their work itself.
    if (typeof props.Runtime === 'string' && !props.Runtime.startsWith('nodejs')) {
      skipped.push({ logicalId, reason: `a ${props.Runtime} Lambda, which the synthesized mode does not run` });
      continue;
    }
    if (!assetPath || !props.Code?.S3Key) {
      skipped.push({ logicalId, reason: 'no asset folder in the cloud assembly' });
      continue;
    }
    const physical = values.physical.get(logicalId)!;
    const variables: Record<string, string> = {};
    for (const [name, value] of Object.entries((props.Environment?.Variables ?? {}) as Record<string, unknown>)) {
      try {
        variables[name] = rename(resolveString(value, values));
      } catch (error) {
        throw new Error(`Lambda ${logicalId}, variable ${name}: ${(error as Error).message}`);
      }
    }
    const fn = {
      name: physical.ref,
      arn: physical.attributes.Arn!,
      roleLogicalId: roleOf(logicalId, props.Role),
      memoryMb: Number(props.MemorySize ?? 128),
      assetDir: stagedAsset(join(template.assemblyDir, String(assetPath))),
    };
    lambdas.push({
      ...fn,
      logicalId,
      handler: String(props.Handler),
      timeoutSeconds: Number(props.Timeout ?? 3),
      environment: { ...variables, ...local(fn) },
    });
  }
  return { lambdas, skipped };
}

/** What the Lambda runtime itself puts in every environment, and the platform's local settings. */
export function runtimeEnvironment(
  fn: { name: string; arn: string; roleLogicalId: string; memoryMb: number; assetDir: string },
  options: { region: string; endpoint: string; settings: Record<string, string> },
): Record<string, string> {
  return {
    ...options.settings,
    AWS_REGION: options.region,
    AWS_DEFAULT_REGION: options.region,
    AWS_LAMBDA_FUNCTION_NAME: fn.name,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memoryMb),
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
    LAMBDA_TASK_ROOT: fn.assetDir,
    SLIPWAY_LOCAL_FUNCTION_ARN: fn.arn,
    TZ: 'UTC',
    PATH: childPath(),
    AWS_ACCESS_KEY_ID: accessKeyIdOf(fn.name),
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_SESSION_TOKEN: `session-${fn.roleLogicalId}`,
    // The one variable a deployed Lambda lacks: every AWS call goes to the checking proxy.
    AWS_ENDPOINT_URL: options.endpoint,
  };
}
