import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AssetHashType, DockerImage, Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { Platform } from 'aws-cdk-lib/aws-ecr-assets';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Architecture, Code, DockerImageCode, DockerImageFunction } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import * as esbuild from 'esbuild';
import type { ResourceUse, RouteRow } from '../lib/http/routes.ts';
import type { WorkerRow } from '../lib/workers.ts';
import { bundleRuntimeEnvironment, esbuildOptions, lambdaArchitecture, lambdaRuntime, repoRoot, runtimePackagesOf } from './bundling.ts';
import { grantUses, type GrantContext } from './grants.ts';
import { lambdaBundles } from './lambda-bundles.ts';

/** The defaults of lib/http/routes.ts RouteRow (timeoutSeconds, memoryMb). */
export const defaultTimeoutSeconds = 10;
export const defaultMemoryMb = 512;

export interface HandlerFunctionProps {
  /** Lambda entry relative to the repository root, as in the route and worker tables. */
  handler: string;
  description: string;
  uses: readonly ResourceUse[];
  timeoutSeconds?: number;
  memoryMb?: number;
  environment: Record<string, string>;
  grants: GrantContext;
  /** A fixed name, for functions whose ARN must be known before they exist (schedule targets). */
  functionName?: string;
  /**
   * The row's packages copied from node_modules into the asset instead of bundled (lib/http/routes.ts RouteRow); the
   * function runs on their architecture. The bundle and the copy follow the handler's row (infra/bundling.ts).
   */
  runtimePackages?: RouteRow['runtimePackages'];
  /** A role and log group shared with functions of the same grants (SharedExecution), instead of its own. */
  shared?: SharedExecution;
}

/**
 * The execution roles and the log group of functions that may share them (the
 * API's routes): one role per distinct set of `uses`, so a function's role
 * still holds exactly its own grants, and one log group, whose entries name
 * their route (lib/logger.ts). A stack holds at most 500 resources, and a
 * role and a log group per route cost two of them each.
 */
export class SharedExecution extends Construct {
  readonly logGroup: logs.LogGroup;
  private readonly roles = new Map<string, InlineGrantsRole>();

  constructor(
    scope: Construct,
    id: string,
    private readonly grants: GrantContext,
  ) {
    super(scope, id);
    this.logGroup = new logs.LogGroup(this, 'Logs', { retention: logs.RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
  }

  /** The role of functions with these uses; named by the uses, so adding a route never renames another's role. */
  roleFor(uses: readonly ResourceUse[]): InlineGrantsRole {
    const key = [...new Set(uses)].sort().join(',');
    let role = this.roles.get(key);
    if (!role) {
      const name = createHash('sha256').update(key).digest('hex').slice(0, 10);
      role = new InlineGrantsRole(this, `Role${name}`, {
        description: `Runs the API routes that use: ${key || 'nothing'}`.slice(0, 1000),
        assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      });
      this.logGroup.grantWrite(role);
      grantUses(role, uses, this.grants);
      this.roles.set(key, role);
    }
    return role;
  }
}

/**
 * A handler's Lambda code: its bundle from the shared build (infra/lambda-bundles.ts), and the row's
 * `runtimePackages` copied, as installed in the repository, into the asset's node_modules (offline: no npm
 * install at synth, no Docker; the copied native binaries keep their mode). Bundled when CDK bundles the
 * stack (not under `aws:cdk:bundling-stacks` naming no stack, as the stack tests synthesize).
 */
export function handlerCode(handler: string): Code {
  const packages = runtimePackagesOf(handler);
  for (const name of packages) {
    if (!fs.existsSync(path.join(repoRoot, 'node_modules', name, 'package.json'))) {
      throw new Error(`Runtime package ${name} is not installed in ${path.join(repoRoot, 'node_modules')} (npm ci installs it)`);
    }
  }
  return Code.fromAsset(repoRoot, {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      // Never pulled: the local bundling below always succeeds. The command names the handler, which keeps each
      // function's asset apart in CDK's staging cache (keyed by these options).
      image: DockerImage.fromRegistry('slipway-local-bundling-only'),
      command: ['bundle', handler],
      local: {
        tryBundle(outputDir) {
          fs.cpSync(lambdaBundles().folderOf(handler), outputDir, { recursive: true });
          for (const name of packages) {
            const target = path.join(outputDir, 'node_modules', name);
            fs.cpSync(path.join(repoRoot, 'node_modules', name), target, { recursive: true, verbatimSymlinks: true });
          }
          return true;
        },
      },
    },
  });
}

/**
 * A role whose grants live inside the role itself (its inline `Grants`
 * policy) rather than in a separate AWS::IAM::Policy: one CloudFormation
 * resource per function instead of two, where a stack holds at most 500.
 * Every grant, CDK's own helpers included, arrives through
 * addToPrincipalPolicy, so nothing can slip into a separate policy.
 */
export class InlineGrantsRole extends iam.Role {
  private readonly grantsDocument: iam.PolicyDocument;

  constructor(scope: Construct, id: string, props: iam.RoleProps) {
    const grantsDocument = new iam.PolicyDocument();
    super(scope, id, { ...props, inlinePolicies: { ...props.inlinePolicies, Grants: grantsDocument } });
    this.grantsDocument = grantsDocument;
  }

  override addToPrincipalPolicy(statement: iam.PolicyStatement): iam.AddToPrincipalPolicyResult {
    this.grantsDocument.addStatements(statement);
    return { statementAdded: true, policyDependable: this };
  }
}

/**
 * One handler file as one Lambda, with its own role and log group, or those
 * its SharedExecution gives it: either way the role holds only the log writes
 * and the grants of the row's `uses`, so no handler gets a permission its row
 * does not name.
 */
export class HandlerFunction extends Construct {
  readonly fn: NodejsFunction;
  readonly role: iam.Role;
  readonly logGroup: logs.ILogGroup;

  constructor(scope: Construct, id: string, props: HandlerFunctionProps) {
    super(scope, id);

    if (props.shared) {
      this.logGroup = props.shared.logGroup;
      this.role = props.shared.roleFor(props.uses);
    } else {
      this.logGroup = new logs.LogGroup(this, 'Logs', {
        retention: logs.RetentionDays.ONE_MONTH,
        removalPolicy: RemovalPolicy.DESTROY,
      });
      this.role = new InlineGrantsRole(this, 'Role', {
        description: `Runs ${props.handler}`,
        assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      });
      // Instead of AWSLambdaBasicExecutionRole (logs on every log group): this function's group only.
      this.logGroup.grantWrite(this.role);
      grantUses(this.role, props.uses, props.grants);
    }

    this.fn = new NodejsFunction(this, 'Function', {
      code: handlerCode(props.handler),
      handler: 'index.handler',
      functionName: props.functionName,
      description: props.description.slice(0, 256),
      runtime: lambdaRuntime,
      architecture: props.runtimePackages?.architecture === 'x86_64' ? Architecture.X86_64 : lambdaArchitecture,
      memorySize: props.memoryMb ?? defaultMemoryMb,
      timeout: Duration.seconds(props.timeoutSeconds ?? defaultTimeoutSeconds),
      role: this.role,
      logGroup: this.logGroup,
      // SDK v3 reuses connections by default; the variable is an SDK v2 switch.
      awsSdkConnectionReuse: false,
      environment: { ...props.environment, ...bundleRuntimeEnvironment },
    });
    Validations.of(this.fn).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'Node 22 is deliberate: the spec promises Node 22 to function authors, and the local platform pins the same major so tests run what Lambda runs.',
    });
  }
}

/** The files of an image row's folder that go into its build context (a stray bundle or node_modules there does not). */
export const imageContextFiles = ['Dockerfile', 'package.json', 'package-lock.json'] as const;

/**
 * The build context of a container-image worker: its folder's Dockerfile and
 * lockfile, and the handler bundled with the stack's esbuild settings as
 * index.mjs (the image installs the row's runtimePackages). Built with the
 * local esbuild at synth, like every other bundle; Docker runs only at deploy.
 */
export function stageImageContext(handler: string, image: NonNullable<WorkerRow['image']>): string {
  const context = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-image-'));
  for (const file of imageContextFiles) fs.copyFileSync(path.join(repoRoot, image.directory, file), path.join(context, file));
  esbuild.buildSync(esbuildOptions(handler, path.join(context, 'index.mjs')));
  return context;
}

/**
 * A worker packaged as a Lambda container image (lib/workers.ts `image`), with
 * the same own role and log group as a HandlerFunction: the role holds the log
 * writes and the grants of the row's `uses` only.
 */
export class ImageHandlerFunction extends Construct {
  readonly fn: DockerImageFunction;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;

  constructor(
    scope: Construct,
    id: string,
    props: Omit<HandlerFunctionProps, 'runtimePackages' | 'functionName'> & { image: NonNullable<WorkerRow['image']> },
  ) {
    super(scope, id);
    this.logGroup = new logs.LogGroup(this, 'Logs', { retention: logs.RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    this.role = new InlineGrantsRole(this, 'Role', {
      description: `Runs ${props.handler} (container image)`,
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    });
    this.logGroup.grantWrite(this.role);

    const context = stageImageContext(props.handler, props.image);
    const x86 = props.image.architecture === 'x86_64';
    try {
      this.fn = new DockerImageFunction(this, 'Function', {
        // The asset copies the context into the cloud assembly here, so the staging folder can go at once.
        code: DockerImageCode.fromImageAsset(context, { platform: x86 ? Platform.LINUX_AMD64 : Platform.LINUX_ARM64 }),
        description: props.description.slice(0, 256),
        architecture: x86 ? Architecture.X86_64 : Architecture.ARM_64,
        memorySize: props.memoryMb ?? defaultMemoryMb,
        timeout: Duration.seconds(props.timeoutSeconds ?? defaultTimeoutSeconds),
        role: this.role,
        logGroup: this.logGroup,
        environment: { ...props.environment, ...bundleRuntimeEnvironment },
      });
    } finally {
      fs.rmSync(context, { recursive: true, force: true });
    }
    grantUses(this.role, props.uses, props.grants);
  }
}

/** "get-team-profile" or "teams" -> "GetTeamProfile" / "Teams". */
export function pascalCase(text: string): string {
  return text
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join('');
}
