import { App, CfnOutput, Stack, Validations, type AppProps, type StackProps } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { Construct } from 'constructs';
import type { ResourceUse } from '../lib/http/routes.ts';
import {
  bucketDefinitions,
  queueDefinitions,
  type QueueName,
  scheduleGroupDefinition,
  secretDefinitions,
  tableDefinition,
  type SecretName,
} from '../lib/resources.ts';
import { SlipwayApi } from './api.ts';
import { readSettings, type DeploymentSettings } from './context.ts';
import { SlipwayState } from './state.ts';
import { tailQueuePrefix } from './grants.ts';
import { FunctionsRuntime } from './functions-runtime.ts';
import { BuildsRuntime } from './builds.ts';
import { SiteServing } from './site-serving.ts';
import { ConsoleHosting } from './console.ts';
import { scheduleTargetEnvironment, SlipwayWorkers } from './workers.ts';
import { config } from '../lib/config.ts';
import { operationsProps, SlipwayOperations } from './operations.ts';

/** The whole platform: state, the HTTP API (one Lambda per route), the workers, site serving and the functions runtime. */
export class SlipwayStack extends Stack {
  readonly state: SlipwayState;
  readonly api: SlipwayApi;
  readonly workers: SlipwayWorkers;
  readonly functions: FunctionsRuntime;
  readonly sites: SiteServing;
  readonly console: ConsoleHosting;
  readonly operations: SlipwayOperations;

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    const settings = readSettings(this);
    this.state = new SlipwayState(this, 'State');
    const functionSettings = this.functionSettings(settings);
    this.workers = new SlipwayWorkers(this, 'Workers', functionSettings);
    this.api = new SlipwayApi(this, 'Api', { ...functionSettings, corsOrigins: settings.corsOrigins });
    this.console = new ConsoleHosting(this, 'Console', {
      httpApi: this.api.httpApi,
      streamingRoutes: this.api.streamingRoutes,
      domain: settings.consoleDomain,
      certificateArn: this.node.tryGetContext('consoleCertificateArn'),
      accessLogsBucket: this.state.accessLogsBucket,
    });
    const { grants, environment } = functionSettings;
    this.sites = new SiteServing(this, 'Sites', {
      grants,
      environment,
      siteDomain: settings.siteDomain,
      certificateArn: this.node.tryGetContext('siteCertificateArn'),
    });
    this.functions = new FunctionsRuntime(this, 'Functions', {
      grants,
      environment,
      functionDomain: settings.functionDomain,
      certificateArn: this.node.tryGetContext('functionCertificateArn'),
    });
    this.connectWorkers();
    // In a nested stack (infra/operations.ts).
    this.operations = this.operationsOfAll();
    this.outputs();
  }

  /** What every platform Lambda (route or worker) is made with: its grants and environment, and the extra variables its uses call for. */
  private functionSettings(settings: DeploymentSettings) {
    const environment = this.platformEnvironment(settings);
    const grants = { state: this.state, mailFrom: settings.mailFrom };
    // Only a function allowed to create schedules needs to know what they target.
    const targets = scheduleTargetEnvironment(this);
    const environmentFor = (uses: readonly ResourceUse[]) => {
      const extra: Record<string, string> = uses.includes('scheduler:write') ? { ...targets } : {};
      // A secret's ARN goes only to the functions allowed to read it (lib/aws/secrets.ts fetches the value).
      for (const name of Object.keys(secretDefinitions) as SecretName[]) {
        if (uses.includes(`secrets:${name}`)) extra[secretDefinitions[name].arnEnvVar] = this.state.secrets[name].secretArn;
      }
      return extra;
    };
    return { grants, environment, environmentFor };
  }

  /** The variables lib/config.ts reads, named by lib/resources.ts. */
  private platformEnvironment(settings: DeploymentSettings): Record<string, string> {
    const { table, buckets, queues, scheduleGroup, schedulerRole } = this.state;
    return {
      [tableDefinition.envVar]: table.tableName,
      [bucketDefinitions.sites.envVar]: buckets.sites.bucketName,
      [bucketDefinitions.bundles.envVar]: buckets.bundles.bucketName,
      // Every work queue's URL, under the variable its definition names.
      ...Object.fromEntries(
        (Object.keys(queueDefinitions) as QueueName[]).map((name) => [queueDefinitions[name].envVar, queues[name].queueUrl]),
      ),
      [scheduleGroupDefinition.envVar]: scheduleGroup.scheduleGroupName,
      [scheduleGroupDefinition.roleEnvVar]: schedulerRole.roleArn,
      FUNCTIONS_TAIL_QUEUE_PREFIX: tailQueuePrefix(this),
      SITE_DOMAIN: settings.siteDomain,
      FUNCTION_DOMAIN: settings.functionDomain,
      CORS_ORIGINS: settings.corsOrigins.join(','),
      // The console's origin: its links in mail, and the one origin cookie-authenticated writes are taken from.
      CONSOLE_URL: `https://${settings.consoleDomain}`,
      MAIL_FROM: settings.mailFrom,
      EMAIL_CONFIRM_URL: settings.emailConfirmUrl,
      ABUSE_INTAKE: settings.abuseIntake,
      ABUSE_REPORTS_PER_SUBMITTER_PER_HOUR: String(settings.abuseReportsPerSubmitterPerHour),
      ABUSE_REPORTS_PLATFORM_PER_HOUR: String(settings.abuseReportsPlatformPerHour),
    };
  }

  /** The workers that drive the functions runtime, the builds and the screenshots, given what each needs of them. */
  private connectWorkers(): void {
    const worker = (name: string) => this.workers.workerFunctions.get(name)?.fn;
    // The queued door's worker starts a runner task per invocation.
    const invocationsWorker = worker('function-invocations');
    if (invocationsWorker) this.functions.connectInvocationsWorker(invocationsWorker);
    // The warm pool's keeper starts blank runner tasks ahead of need.
    const warmPoolKeeper = worker('function-warm-tasks');
    if (warmPoolKeeper) this.functions.connectWarmPoolKeeper(warmPoolKeeper);
    // A publish's function Lambdas are made by the function-lambdas worker, as the router makes them.
    const prepareWorker = worker('function-lambdas');
    if (prepareWorker) this.functions.connectPrepareWorker(prepareWorker);
    // The cloud sweep removes the user-function Lambdas no record names.
    const sweepWorker = worker('cloud-sweep');
    if (sweepWorker) this.functions.connectSweepWorker(sweepWorker);
    // The builds worker starts and follows builds in the CodeBuild project.
    const builds = new BuildsRuntime(this, 'Builds', { functions: this.functions });
    const buildsWorker = worker('builds');
    if (buildsWorker) builds.connectBuildsWorker(buildsWorker);
    // The capture worker reports each screenshot through the public result endpoint, with the job's token.
    worker('screenshots-capture')?.addEnvironment('API_BASE_URL', this.api.stage.url);
  }

  /** The alarm topic, alarms, dashboard and saved log queries of the whole platform. */
  private operationsOfAll(): SlipwayOperations {
    return new SlipwayOperations(
      this,
      'Operations',
      operationsProps(this, {
        state: this.state,
        api: this.api,
        door: {
          service: this.functions.doorService,
          instance: this.functions.doorInstance,
          targetGroup: this.functions.doorTargetGroup,
          scope: this.functions,
        },
        alarmEmail: this.node.tryGetContext('alarmEmail'),
      }),
    );
  }

  private outputs(): void {
    new CfnOutput(this, 'ApiUrl', { value: this.api.stage.url, description: 'Base URL of the platform API' });
    new CfnOutput(this, 'TableName', { value: this.state.table.tableName });
    new CfnOutput(this, 'SitesBucketName', { value: this.state.buckets.sites.bucketName });
    new CfnOutput(this, 'BundlesBucketName', { value: this.state.buckets.bundles.bucketName });
  }
}

/** The CDK app with cdk-nag's AWS Solutions checks: `infra/app.ts` and the infra tests build it the same way. */
export function buildSlipwayApp(props: AppProps = {}): { app: App; stack: SlipwayStack } {
  const app = new App(props);
  const stackName = app.node.tryGetContext('stackName');
  const stack = new SlipwayStack(app, typeof stackName === 'string' && stackName ? stackName : 'Slipway', {
    description: 'Slipway: static sites and serverless functions for teams',
    env: config.cdkDeployEnvironment(),
  });
  // cdk-nag 3 runs as a policy-validation plugin: synthesis fails on any unacknowledged finding.
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { app, stack };
}
