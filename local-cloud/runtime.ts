import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { CreateEmailIdentityCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import type { SQSEvent } from 'aws-lambda';
import { secretDefinitions } from '../lib/resources.ts';
import { join } from 'node:path';
import { parsePreviewHost } from '../lib/sites/preview-hosts.ts';
import { customDomainHost, siteSubdomain } from '../lib/sites/hostname.ts';
import type { HostnameHandler } from '../lib/local/api-server.ts';
import { isFunctionHostname } from '../lib/local/functions-runtime.ts';
import type { LocalDriver } from '../lib/local/driver.ts';
import { queueConsumerDriver, type QueueConsumer, type QueueDriver } from '../lib/local/queue-driver.ts';
import { schedulerDriver, type ScheduleTarget } from '../lib/local/scheduler-driver.ts';
import { templateApi, templateCors, templateRoutes } from './api-gateway/api-gateway.ts';
import { invokeRefusals } from './api-gateway/api-invoke.ts';
import {
  answerThroughDistribution,
  resolveDynamicReferences,
  resolveOriginHeaders,
  templateDistributions,
  templateStreamingBehaviors,
  type StreamingBehavior,
  type TemplateDistribution,
} from './cloudfront/cloudfront.ts';
import { rolePolicies, type RolePolicies } from './iam/iam-policies.ts';
import { startIamProxy, type IamProxy, type LambdaPrincipal, type PermissionUsage } from './iam/iam-proxy.ts';
import { resolveString, withPlaceholders, type LocalStackValues } from './template/intrinsics.ts';
import { LambdaFunctionHost, type SynthLambda } from './lambda/lambda-host.ts';
import type { ArnContext } from './iam/iam-requests.ts';
import { createLocalLambdaService, type LocalLambdaService } from './lambda/lambda-service.ts';
import { createLocalEcsService, type LocalEcsService } from './ecs/ecs-service.ts';
import { createLoadBalancers, type LocalLoadBalancers } from './load-balancers/load-balancers.ts';
import { templateContainerInstances, type ContainerInstances } from './ecs/container-instances.ts';
import { templateEcs, type TaskDefinition } from './ecs/ecs-template.ts';
import {
  accessKeyIdOf,
  platformOverlay,
  localSettingVariables,
  runtimeEnvironment,
  stagedAsset,
  templateLambdas,
} from './lambda/lambdas.ts';
import { provisionTemplate } from './template/provision.ts';
import { readSynthesizedTemplate, resourcesOfType, type SynthesizedTemplate } from './template/template.ts';
import { localConfig } from '../lib/local-config.ts';
import { config } from '../lib/config.ts';

/** moto's default account: ARNs the template resolves to match the ones moto hands out. */
export const LOCAL_ACCOUNT_ID = '123456789012';

export interface SynthesizedRuntime {
  /** Variables naming the resources (the state file and the platform's own process get them). */
  env: Record<string, string>;
  api(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse, body: Buffer): Promise<void>;
  hostnameHandlers: HostnameHandler[];
  /** The IAM proxy in front of the AWS endpoint: where the Lambdas' calls go (the mail outbox forwards there). */
  awsEndpoint: string;
  drivers: (() => LocalDriver)[];
  lambdaCount: number;
  skipped: { logicalId: string; reason: string }[];
  hosts: Map<string, LambdaFunctionHost>;
  /** The local ECS the template's tasks run in (a test reads the tasks it ran). */
  ecs: LocalEcsService;
  /** The event source mappings' consumer, once its driver started (a test holds a message in its queue). */
  queues(): Pick<QueueDriver, 'pause' | 'resume' | 'idle'> | undefined;
  /** The Lambda service of the user-function Lambdas: how many CreateFunction calls named each. */
  userLambdas: Pick<LocalLambdaService, 'createCalls'>;
  usage(): PermissionUsage[];
  stop(): Promise<void>;
}

function queueConsumers(
  template: SynthesizedTemplate,
  values: LocalStackValues,
  lambdaOf: (id: string) => LambdaFunctionHost | undefined,
): QueueConsumer[] {
  return resourcesOfType(template, 'AWS::Lambda::EventSourceMapping').flatMap(([logicalId, mapping]) => {
    const props = mapping.Properties ?? {};
    const queueId = props.EventSourceArn?.['Fn::GetAtt']?.[0];
    const functionId = props.FunctionName?.Ref;
    const host = lambdaOf(functionId);
    const queue = values.physical.get(queueId);
    if (!queue) throw new Error(`Event source mapping ${logicalId}: its source is not a queue of the template`);
    if (!host) return [];
    return [
      {
        name: host.fn.name,
        queueUrl: () => queue.ref,
        batchSize: Number(props.BatchSize ?? 10),
        batchingWindowSeconds: Number(props.MaximumBatchingWindowInSeconds ?? 0),
        maxConcurrency: props.ScalingConfig?.MaximumConcurrency,
        reportBatchItemFailures: (props.FunctionResponseTypes ?? []).includes('ReportBatchItemFailures'),
        handler: async () => async (event: SQSEvent) => (await host.invoke(event)) as never,
      },
    ];
  });
}

/** The platform's view of the resources: each variable any Lambda gets, and the secrets' values beside their ARNs. */
async function platformEnvironment(
  hosts: Map<string, LambdaFunctionHost>,
  endpoint: string,
  region: string,
): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  for (const host of hosts.values()) {
    for (const [name, value] of Object.entries(host.fn.environment)) {
      if (name.startsWith('AWS_') || name.startsWith('LAMBDA_') || name === 'SLIPWAY_LOCAL_FUNCTION_ARN' || name in env) continue;
      env[name] = value;
    }
  }
  const secrets = new SecretsManagerClient({ endpoint, region });
  try {
    for (const definition of Object.values(secretDefinitions)) {
      const arn = env[definition.arnEnvVar];
      if (arn) env[definition.envVar] = (await secrets.send(new GetSecretValueCommand({ SecretId: arn }))).SecretString!;
    }
  } finally {
    secrets.destroy();
  }
  for (const name of ['NODE_OPTIONS', 'TZ', 'PATH']) delete env[name];
  return env;
}

/** What the IAM proxy needs beyond the request: each table's partition key and each subnet's VPC. */
function arnContext(template: SynthesizedTemplate, values: LocalStackValues, taskDefinitions: TaskDefinition[]): ArnContext {
  const tableHashKeys = new Map<string, string>();
  for (const [id, table] of resourcesOfType(template, 'AWS::DynamoDB::Table')) {
    const hash = (table.Properties?.KeySchema ?? []).find((k: any) => k.KeyType === 'HASH')?.AttributeName;
    if (hash) tableHashKeys.set(values.physical.get(id)!.ref, hash);
  }
  const subnetVpcs = new Map<string, string>();
  for (const [id, subnet] of resourcesOfType(template, 'AWS::EC2::Subnet')) {
    const vpc = values.physical.get(subnet.Properties?.VpcId?.Ref)?.ref;
    if (vpc) subnetVpcs.set(values.physical.get(id)!.ref, vpc);
  }
  return {
    region: values.region,
    accountId: values.accountId,
    tableHashKey: (t) => tableHashKeys.get(t),
    subnetVpc: (s) => subnetVpcs.get(s),
    taskDefinitionRoles: (arn) =>
      taskDefinitions.find((d) => [d.arn, d.family, `${d.family}:${d.revision}`].includes(arn))?.passedRoles ?? [],
  };
}

/** The template's layers whose asset is a folder, by the ARN the Lambdas are given: where their files are. */
function templateLayers(template: SynthesizedTemplate, values: LocalStackValues, rename: (text: string) => string): Map<string, string> {
  const layers = new Map<string, string>();
  for (const [id, layer] of resourcesOfType(template, 'AWS::Lambda::LayerVersion')) {
    const assetPath = String(layer.Metadata?.['aws:asset:path'] ?? '');
    if (assetPath && !assetPath.endsWith('.zip'))
      layers.set(rename(values.physical.get(id)!.ref), stagedAsset(join(template.assemblyDir, assetPath)));
  }
  return layers;
}

/** SES sends only from a verified identity: each sender address the Lambdas are configured with. */
async function verifySenders(lambdas: SynthLambda[], endpoint: string, region: string): Promise<void> {
  const ses = new SESv2Client({ endpoint, region });
  try {
    for (const address of new Set(lambdas.map((fn) => fn.environment.MAIL_FROM).filter(Boolean))) {
      await ses.send(new CreateEmailIdentityCommand({ EmailIdentity: address })).catch((error: Error) => {
        if (error.name !== 'AlreadyExistsException') throw error;
      });
    }
  } finally {
    ses.destroy();
  }
}

/**
 * The template's distributions, their origins' custom headers resolved as CloudFormation does at deploy (a secret's
 * value into the sites origin header).
 */
async function distributionsOf(
  template: SynthesizedTemplate,
  resolve: (value: unknown) => string,
  endpoint: string,
  region: string,
): Promise<TemplateDistribution[]> {
  const distributions = templateDistributions(template);
  const secrets = new SecretsManagerClient({ endpoint, region });
  try {
    const secretString = async (arn: string) => (await secrets.send(new GetSecretValueCommand({ SecretId: arn }))).SecretString!;
    await resolveOriginHeaders(distributions, (value) => resolveDynamicReferences(resolve(value), secretString));
  } finally {
    secrets.destroy();
  }
  return distributions;
}

/** The hosts the functions and sites distributions answer, each through its viewer function and origins. */
function distributionHosts(
  distributions: TemplateDistribution[],
  lambdaOf: (logicalId: string) => LambdaFunctionHost,
  vpcTargets: { loadBalancers: LocalLoadBalancers; instances: ContainerInstances },
): HostnameHandler[] {
  const sites = distributions.find((d) => d.path.startsWith('Sites/'));
  const siteHost: HostnameHandler = async (req, res) => {
    // The hosts the sites distribution answers: *.{siteDomain}, *.previews.{siteDomain} and custom domains.
    const host = req.headers.host;
    if (!sites || (!siteSubdomain(host) && !parsePreviewHost(host) && !customDomainHost(host))) return false;
    await answerThroughDistribution(req, res, sites, lambdaOf);
    return true;
  };
  // *.{function_domain}: the functions distribution (its viewer function copies Host) to the router's function URL,
  // or to the door (a VPC origin: its instance, or its load balancer) for a body too large for the function URL.
  const functions = distributions.find((d) => d.path.startsWith('Functions/'));
  const functionHostname: HostnameHandler = async (req, res) => {
    if (!functions || !isFunctionHostname(req.headers.host)) return false;
    await answerThroughDistribution(req, res, functions, lambdaOf, vpcTargets);
    return true;
  };
  return [functionHostname, siteHost];
}

/**
 * The console's API: a streaming route (a live tail) goes by its distribution behavior to its Lambda's
 * response-streaming function URL, as CloudFront sends it in the cloud; every other path to the HTTP API.
 */
function consoleApi(
  template: SynthesizedTemplate,
  routes: ReturnType<typeof templateRoutes>,
  refusals: Map<string, string>,
  lambdaOf: (logicalId: string) => LambdaFunctionHost,
): SynthesizedRuntime['api'] {
  const streaming: StreamingBehavior[] = templateStreamingBehaviors(template);
  const httpApi = templateApi(routes, () => templateCors(template, config.corsOrigins()), lambdaOf, refusals);
  return async (req, res, body) => {
    const path = new URL(req.url ?? '/', 'http://local').pathname;
    const behavior = streaming.find((b) => b.matches(path));
    if (!behavior) return httpApi(req, res, body);
    await answerThroughDistribution(req, res, behavior.distribution, lambdaOf, {}, { body });
  };
}

interface RuntimeOptions {
  assemblyDir: string;
  endpoint: string;
  region: string;
  prefix: string;
  /** Changes the template before it runs (a test removes one grant to see its denial). */
  alterTemplate?: (template: SynthesizedTemplate) => void;
}

/**
 * The template's stateful resources made on the AWS endpoint, what its intrinsics resolve to there, and the
 * renaming of the names it asked for into the ones made (the platform's prefix).
 */
async function provisionStack(options: RuntimeOptions) {
  const template = readSynthesizedTemplate(options.assemblyDir);
  options.alterTemplate?.(template);
  const base = { accountId: LOCAL_ACCOUNT_ID, region: options.region, stackName: template.stackName };
  const { physical: made, renames } = await provisionTemplate(template, { ...options, accountId: LOCAL_ACCOUNT_ID });
  const values: LocalStackValues = { ...base, physical: withPlaceholders(template, base, made) };
  const rename = (text: string) => [...renames].reduce((out, [from, to]) => out.split(from).join(to), text);
  const renameDeep = <T>(value: T): T => JSON.parse(rename(JSON.stringify(value))) as T;
  return { template, values, rename, renameDeep };
}

/** A task's containers carry keys that name its task definition: the proxy checks their calls against the task role. */
const taskKey = (definition: TaskDefinition) => `LOCALTASK${definition.family}`;

/** Each Lambda's and each task definition's access key, with the role the IAM proxy checks its calls against. */
function principalsOf(lambdas: SynthLambda[], roles: Record<string, RolePolicies>, taskDefinitions: TaskDefinition[]) {
  const principals = new Map<string, LambdaPrincipal>(
    lambdas.map((fn) => [accessKeyIdOf(fn.name), { functionName: fn.name, role: roles[fn.roleLogicalId]! }]),
  );
  for (const definition of taskDefinitions) {
    const role = definition.taskRoleLogicalId ? roles[definition.taskRoleLogicalId] : undefined;
    if (role) principals.set(taskKey(definition), { functionName: definition.family, role });
  }
  return principals;
}

/** An execution environment host per Lambda; the functions door's router serves one request per environment. */
function lambdaHostsOf(lambdas: SynthLambda[], distributions: TemplateDistribution[]) {
  const doorRouters = new Set(distributions.filter((d) => d.path.startsWith('Functions/')).map((d) => d.originFunctionLogicalId));
  const maxEnvironments = (fn: SynthLambda) =>
    doorRouters.has(fn.logicalId) ? localConfig.doorLambdaMaxEnvironments() : localConfig.lambdaMaxEnvironments();
  const hosts = new Map(lambdas.map((fn) => [fn.logicalId, new LambdaFunctionHost(fn, maxEnvironments(fn), platformOverlay())]));
  const lambdaOf = (logicalId: string) => {
    const host = hosts.get(logicalId);
    if (!host) throw new Error(`Lambda ${logicalId} is not run by the local platform`);
    return host;
  };
  return { hosts, lambdaOf };
}

/**
 * Starts what the synthesized template describes, on the local AWS endpoint:
 * its stateful resources, each Lambda from its asset (worker threads with the
 * Lambda's own environment and credentials) behind the IAM checking proxy,
 * the HTTP API's routes, the event source mappings, the Scheduler targets and
 * the ECS services behind their load balancers, and the CloudFront distributions' viewer functions and origins.
 */
export async function startSynthesizedRuntime(options: RuntimeOptions): Promise<SynthesizedRuntime> {
  const { region } = options;
  const { template, values, rename, renameDeep } = await provisionStack(options);
  const roles = renameDeep(Object.fromEntries(rolePolicies(template, values)));
  const { lambdas, skipped } = templateLambdas(template, values, rename, (fn) =>
    // The proxy's address is set below, once it listens.
    runtimeEnvironment(fn, { region, endpoint: '', settings: localConfig.setVariables(localSettingVariables) }),
  );
  const ecsResources = renameDeep(templateEcs(template, values));
  const principals = principalsOf(lambdas, roles, ecsResources.taskDefinitions);
  const userLambdas = createLocalLambdaService({ region, accountId: LOCAL_ACCOUNT_ID, layers: templateLayers(template, values, rename) });
  const instances = templateContainerInstances(template, values);
  const ecs = createLocalEcsService({
    region,
    accountId: LOCAL_ACCOUNT_ID,
    ...ecsResources,
    instances,
    // A service's containers (the door) get the local settings the Lambdas get, at their start.
    localEnvironment: platformOverlay(),
    roleCredentials: (definition) => ({ accessKeyId: taskKey(definition), secretAccessKey: 'local', endpoint: proxy.endpoint }),
  });
  const proxy: IamProxy = await startIamProxy({
    target: options.endpoint,
    principals,
    arns: arnContext(template, values, ecsResources.taskDefinitions),
    services: { lambda: userLambdas.handle, ecs: ecs.handle },
  });
  for (const fn of lambdas) fn.environment.AWS_ENDPOINT_URL = proxy.endpoint;
  // The services start as CloudFormation creates them; the start waits below for their tasks to be healthy.
  const loadBalancers = createLoadBalancers(template, values);
  const servicesSteady = ecs.startServices(loadBalancers, localConfig.ecsServiceStartTimeoutMs());
  // Until it is awaited, a failure is reported there, not as an unhandled rejection.
  servicesSteady.catch(() => undefined);

  const distributions = await distributionsOf(template, (value) => rename(resolveString(value, values)), options.endpoint, region);
  const { hosts, lambdaOf } = lambdaHostsOf(lambdas, distributions);
  await verifySenders(lambdas, options.endpoint, region);

  const routes = templateRoutes(template);
  const functionArn = (logicalId: string) => lambdaOf(logicalId).fn.arn;
  const refusals = await invokeRefusals(template, routes, roles, { accountId: LOCAL_ACCOUNT_ID, functionArn });
  const targets = new Map<string, ScheduleTarget>(
    lambdas.map((fn) => [fn.arn, { name: fn.name, invoke: (input: unknown) => lambdaOf(fn.logicalId).invoke(input) }]),
  );
  let consumers: QueueDriver | undefined;
  const stop = async () => {
    loadBalancers.stop();
    await Promise.all([...hosts.values()].map((host) => host.stop()).concat(userLambdas.stop(), ecs.stop()));
    await proxy.stop();
  };
  const env = await platformEnvironment(hosts, options.endpoint, region);
  await servicesSteady.catch(async (error: unknown) => {
    // As a stack whose service never stabilizes is rolled back: nothing of this start is left running.
    await stop();
    throw error;
  });
  return {
    env,
    api: consoleApi(template, routes, refusals, lambdaOf),
    hostnameHandlers: distributionHosts(distributions, lambdaOf, { loadBalancers, instances }),
    awsEndpoint: proxy.endpoint,
    drivers: [
      () => schedulerDriver({ targets: () => targets }),
      () => (consumers = queueConsumerDriver(queueConsumers(template, values, (id) => hosts.get(id)))),
    ],
    lambdaCount: lambdas.length,
    skipped,
    hosts,
    ecs,
    queues: () => consumers,
    userLambdas,
    usage: () => proxy.usage(),
    stop,
  };
}
