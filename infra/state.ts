import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  bucketDefinitions,
  queueDefinitions,
  scheduleGroupDefinition,
  secretDefinitions,
  tableDefinition,
  type BucketName,
  type QueueName,
  type SecretName,
} from '../lib/resources.ts';

/** The data buckets of lib/resources.ts: private, versioned, logged to the access-logs bucket, each with its expiry rules. */
function dataBuckets(scope: Construct, accessLogsBucket: s3.Bucket): Record<BucketName, s3.Bucket> {
  const buckets = {} as Record<BucketName, s3.Bucket>;
  for (const [name, definition] of Object.entries(bucketDefinitions) as [BucketName, (typeof bucketDefinitions)[BucketName]][]) {
    buckets[name] = new s3.Bucket(scope, definition.id, {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      versioned: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: accessLogsBucket,
      serverAccessLogsPrefix: `${definition.id}/`,
      // Versioning keeps replaced objects; without expiry every redeploy would be kept forever.
      lifecycleRules: [
        { noncurrentVersionExpiration: Duration.days(30), abortIncompleteMultipartUploadAfter: Duration.days(1) },
        ...definition.expire.map((rule) => ({
          prefix: rule.prefix,
          expiration: Duration.days(rule.days),
          ...('noncurrentDays' in rule ? { noncurrentVersionExpiration: Duration.days(rule.noncurrentDays) } : {}),
        })),
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }
  return buckets;
}

/** The queues of lib/resources.ts, each with its dead-letter queue. */
function queuesWithDeadLetters(scope: Construct): { queues: Record<QueueName, sqs.Queue>; deadLetterQueues: Record<QueueName, sqs.Queue> } {
  const queues = {} as Record<QueueName, sqs.Queue>;
  const deadLetterQueues = {} as Record<QueueName, sqs.Queue>;
  for (const [name, definition] of Object.entries(queueDefinitions) as [QueueName, (typeof queueDefinitions)[QueueName]][]) {
    const deadLetterQueue = new sqs.Queue(scope, `${definition.id}Dlq`, {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // The longest SQS allows: time for an operator to look at what failed.
      retentionPeriod: Duration.days(14),
    });
    deadLetterQueues[name] = deadLetterQueue;
    queues[name] = new sqs.Queue(scope, definition.id, {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: Duration.seconds(definition.visibilityTimeoutSeconds),
      deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: definition.maxReceiveCount },
    });
  }
  return { queues, deadLetterQueues };
}

/**
 * Every stateful resource of lib/resources.ts (the same list the local
 * platform provisions), plus the role EventBridge Scheduler assumes.
 */
export class SlipwayState extends Construct {
  readonly table: dynamodb.Table;
  readonly buckets: Record<BucketName, s3.Bucket>;
  readonly queues: Record<QueueName, sqs.Queue>;
  readonly deadLetterQueues: Record<QueueName, sqs.Queue>;
  readonly scheduleGroup: scheduler.ScheduleGroup;
  readonly schedulerRole: iam.Role;
  readonly secrets: Record<SecretName, secretsmanager.Secret>;
  readonly accessLogsBucket: s3.Bucket;
  readonly tableIndexNames: string[] = tableDefinition.globalSecondaryIndexes.map((gsi) => gsi.indexName);

  constructor(scope: Construct, id: string) {
    super(scope, id);
    // S3 log delivery is granted by a bucket policy, not the legacy ACL (which needs ObjectWriter
    // ownership). Set here, before any child exists, so the construct does not depend on cdk.json.
    this.node.setContext('@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy', true);

    const attribute = (name: string) => ({ name, type: dynamodb.AttributeType.STRING });
    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: attribute(tableDefinition.partitionKey),
      sortKey: attribute(tableDefinition.sortKey),
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: tableDefinition.ttlAttribute,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    for (const gsi of tableDefinition.globalSecondaryIndexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: gsi.indexName,
        partitionKey: attribute(gsi.partitionKey),
        sortKey: attribute(gsi.sortKey),
        projectionType: dynamodb.ProjectionType.ALL,
      });
    }

    // Server access logs of the data buckets: S3 delivers them with its own
    // principal, which needs SSE-S3 (not KMS) on the target bucket.
    this.accessLogsBucket = new s3.Bucket(this, 'AccessLogsBucket', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [{ expiration: Duration.days(90) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.buckets = dataBuckets(this, this.accessLogsBucket);

    ({ queues: this.queues, deadLetterQueues: this.deadLetterQueues } = queuesWithDeadLetters(this));

    this.scheduleGroup = new scheduler.ScheduleGroup(this, scheduleGroupDefinition.id, {
      // Deleting the group deletes its pending schedules (provisional project expiry): keep it.
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.schedulerRole = new iam.Role(this, 'SchedulerRole', {
      description: 'Assumed by EventBridge Scheduler to invoke Slipway schedule targets',
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', {
        // Only schedules of this account may use the role (confused deputy).
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }),
    });
    // Scheduled functions' ticks (lib/functions/schedules.ts): the invocations queue is the only queue it sends to.
    this.queues.invocations.grantSendMessages(this.schedulerRole);

    // Secret values are generated by Secrets Manager at creation and never pass through the template;
    // functions get the ARN and read the value on cold start (lib/aws/secrets.ts).
    const gitState = new secretsmanager.Secret(this, secretDefinitions.gitState.id, {
      description: 'Slipway: HMAC key of Git connect state tokens',
      generateSecretString: { passwordLength: 64, excludePunctuation: true, includeSpace: false },
      // Losing it only invalidates connect states still in flight (they live 10 minutes).
      removalPolicy: RemovalPolicy.DESTROY,
    });
    Validations.of(gitState).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'Not rotated automatically: the key signs Git connect states that live 10 minutes and are verified against the current key only, ' +
        'so a rotation would fail every install in flight. Rotating it by hand (put a new value, then cold-start the functions) is safe at a quiet moment; ' +
        'automatic rotation would need verification against the previous key too, which is not built.',
    });
    // The forge tokens' signing keys (lib/git/forge-keys.ts): a generated 64-character seed is a key set of one
    // ES256 key, derived from it at run time; the public half is published at /.well-known/jwks.json.
    const forgeSigning = new secretsmanager.Secret(this, secretDefinitions.forgeSigning.id, {
      description: 'Slipway: seed of the forge tokens ES256 signing key (a JSON key set while a rotation runs)',
      generateSecretString: { passwordLength: 64, excludePunctuation: true, includeSpace: false },
      // Losing it only means a new key: forges read the JWKS again; tokens live five minutes.
      removalPolicy: RemovalPolicy.DESTROY,
    });
    Validations.of(forgeSigning).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'Rotated by the operator (docs/builds.md, "Forge tokens"): bin/rotate-forge-key.mjs writes a key set that announces a new key ' +
        'fifteen minutes ahead and keeps the old one published until its last token has expired; the functions read the value again every ' +
        'five minutes. A Secrets Manager rotation Lambda that replaced the value outright would drop the old key while its tokens live.',
    });
    const envEncryption = new secretsmanager.Secret(this, secretDefinitions.envEncryption.id, {
      description: 'Slipway: AES-256 key of stored environment variable values (64 hex characters)',
      // GenerateSecretString picks characters from classes and cannot emit the base64 of exactly 32 bytes;
      // limited to 0-9 and a-f it emits 64 hex characters, 256 bits, which lib/env/encryption.ts accepts.
      generateSecretString: {
        passwordLength: 64,
        excludeUppercase: true,
        excludePunctuation: true,
        includeSpace: false,
        excludeCharacters: 'ghijklmnopqrstuvwxyz',
      },
      // Losing this key loses every stored environment variable value (they cannot be decrypted without it):
      // the secret outlives the stack, like the table that holds the ciphertexts.
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(envEncryption).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'Not rotated: every stored environment variable value is sealed under this key, so a new key needs all values re-encrypted ' +
        '(decrypt under the old key, encrypt under the new one, with a key version in the sealed form). That re-encryption is not built; ' +
        'a rotation Lambda that only replaced the value would make every stored value unreadable.',
    });
    // The value is the billing provider's (Stripe makes an endpoint's signing secret): the generated one is
    // a placeholder that verifies nothing until the operator puts the real one (docs/deploy.md), so the
    // receiver fails closed, never open.
    const billingWebhook = new secretsmanager.Secret(this, secretDefinitions.billingWebhook.id, {
      description: "Slipway: the billing provider's webhook signing secret (Stripe whsec_...); put the real value after deploying",
      generateSecretString: { passwordLength: 64, excludePunctuation: true, includeSpace: false },
      // The provider keeps the value and can show or roll it again.
      removalPolicy: RemovalPolicy.DESTROY,
    });
    Validations.of(billingWebhook).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        "The value is made by the billing provider, not by us: it is rolled in the provider's dashboard (which signs with old and new " +
        'secrets side by side for a while, and the receiver accepts any matching v1 signature), then put here by hand.',
    });
    this.secrets = { gitState, forgeSigning, envEncryption, billingWebhook, siteOrigin: siteOriginSecret(this) };
  }
}

/**
 * Shared by the sites distribution (an origin header, resolved when CloudFormation deploys it) and the serve-site
 * function URL that takes methods other than GET and HEAD, which refuses a request without it (infra/site-serving.ts).
 */
function siteOriginSecret(scope: Construct): secretsmanager.Secret {
  const secret = new secretsmanager.Secret(scope, secretDefinitions.siteOrigin.id, {
    description: 'Slipway: the origin header value the sites distribution sends to the serve-site URL for methods other than GET and HEAD',
    generateSecretString: { passwordLength: 64, excludePunctuation: true, includeSpace: false },
    // Losing it only means a new value at the next deploy.
    removalPolicy: RemovalPolicy.DESTROY,
  });
  Validations.of(secret).acknowledge({
    id: 'AwsSolutions-SMG4',
    reason:
      'Not rotated automatically: CloudFront holds the value resolved when the stack deployed, so a rotation alone would make every ' +
      'non-GET site request answer 403 until the next deploy. Rotate by putting a new value, then deploying (docs/deploy.md).',
  });
  return secret;
}
