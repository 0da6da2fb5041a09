import * as fs from 'node:fs';
import { Duration, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import * as codebuild from 'aws-cdk-lib/aws-codebuild';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { cloudBuildVariables } from '../lib/builds/cloud-host.ts';
import { stageBuildImage } from './build-image.ts';
import { computeSubnets } from './functions-network.ts';
import type { FunctionsRuntime } from './functions-runtime.ts';

/** CodeBuild's own limit on a build, above the platform's 15-minute budget (the worker stops a build at the budget). */
const BUILD_TIMEOUT_MINUTES = 20;

export interface BuildsRuntimeProps {
  /** The network and the deny list of user code: builds run beside user functions, with the same rules. */
  functions: FunctionsRuntime;
}

/**
 * Where builds run in the cloud (docs/builds.md): one CodeBuild project whose
 * image is the repository's Node 22 with the build script, in the compute
 * subnets behind the compute security group (HTTPS to public addresses only,
 * as user functions), under a service role that may write its logs and pull
 * its image and is denied every platform resource. Source and results travel
 * through presigned S3 URLs the builds worker makes.
 */
export class BuildsRuntime extends Construct {
  readonly project: codebuild.Project;

  constructor(scope: Construct, id: string, props: BuildsRuntimeProps) {
    super(scope, id);
    const { functions } = props;
    const role = new iam.Role(this, 'BuildRole', {
      description: 'Runs user builds: its logs, its image and the VPC network interfaces; no platform resource',
      assumedBy: new iam.ServicePrincipal('codebuild.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }),
    });
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'NoPlatformResources',
        effect: iam.Effect.DENY,
        notActions: ['ec2:*', 'logs:*', 'ecr:*'],
        resources: functions.platformResources,
      }),
    );
    const context = stageBuildImage();
    let buildImage: codebuild.IBuildImage;
    try {
      // The asset copies the context into the cloud assembly here, so the staging folder can go at once.
      buildImage = codebuild.LinuxBuildImage.fromAsset(this, 'Image', { directory: context, file: 'Dockerfile' });
    } finally {
      fs.rmSync(context, { recursive: true, force: true });
    }
    const logGroup = new logs.LogGroup(this, 'BuildLogs', {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.project = new codebuild.Project(this, 'Project', {
      description: 'Slipway user builds: the build script in the Node 22 image (lib/builds/script)',
      role,
      environment: {
        buildImage,
        // 3 GB: the default BUILD_MEMORY_MB of a build.
        computeType: codebuild.ComputeType.SMALL,
        privileged: false,
      },
      vpc: functions.vpc,
      subnetSelection: computeSubnets,
      securityGroups: [functions.computeSecurityGroup],
      timeout: Duration.minutes(BUILD_TIMEOUT_MINUTES),
      queuedTimeout: Duration.hours(1),
      logging: { cloudWatch: { logGroup } },
      buildSpec: codebuild.BuildSpec.fromObject({
        version: '0.2',
        phases: { build: { commands: ['node /slipway/build.mjs all'] } },
      }),
    });
    const stack = Stack.of(this);
    const projectId = stack.getLogicalId(this.project.node.defaultChild as codebuild.CfnProject);
    const at = (service: string) =>
      `arn:<AWS::Partition>:${service}:${Token.isUnresolved(stack.region) ? '<AWS::Region>' : stack.region}:${Token.isUnresolved(stack.account) ? '<AWS::AccountId>' : stack.account}`;
    for (const [resource, reason] of [
      [
        `${at('ec2')}:network-interface/*`,
        'A VPC build attaches network interfaces CodeBuild names at run time (CDK scopes the grant to the compute subnets).',
      ],
      [
        `${at('logs')}:log-group:/aws/codebuild/<${projectId}>:*`,
        "CodeBuild's default log group of this project: its streams are named per build.",
      ],
      [
        `${at('codebuild')}:report-group/<${projectId}>-*`,
        'Test report groups of this project, named per build by CodeBuild (builds write none, CDK grants them by default).',
      ],
    ] as const) {
      Validations.of(role).acknowledge({ id: `AwsSolutions-IAM5[Resource::${resource}]`, reason });
    }
    this.acknowledgeProject();
  }

  /** cdk-nag's project findings, each with why it does not apply. */
  private acknowledgeProject(): void {
    for (const [rule, reason] of [
      [
        'AwsSolutions-CB4',
        'A build produces no CodeBuild artifacts to encrypt: its output is PUT to a presigned URL of the bundles bucket, which is encrypted.',
      ],
      [
        'AwsSolutions-CB5',
        "The image is the platform's own (lib/builds/script/Dockerfile): the repository's pinned Node 22 and the build script, not a CodeBuild-provided image.",
      ],
      [
        'AwsSolutions-IAM5[Resource::*]',
        'CodeBuild creates and describes the network interfaces of a VPC build with the service role; EC2 cannot scope those calls to resources.',
      ],
    ] as const) {
      Validations.of(this).acknowledge({ id: rule, reason });
    }
  }

  /** The builds worker starts, reads and stops builds of this project, and only of it. */
  connectBuildsWorker(worker: lambda.Function): void {
    worker.addEnvironment(cloudBuildVariables.projectName, this.project.projectName);
    worker.role!.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['codebuild:StartBuild', 'codebuild:BatchGetBuilds', 'codebuild:StopBuild'],
        resources: [this.project.projectArn],
      }),
    );
  }
}
