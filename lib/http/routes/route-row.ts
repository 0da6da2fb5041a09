import type { SecretName } from '../../resources.ts';
import type { AccessRule } from '../../access/rules.ts';

/**
 * What a row of the route table (lib/http/routes.ts) says. `uses` lists what
 * the handler touches; the stack grants exactly that.
 */
export type ResourceUse =
  | 'table:read'
  | 'table:write'
  /** UpdateItem on site analytics rows only (partition keys ANALYTICS#...): the serve-site Lambda's counters. */
  | 'table:analytics'
  | 'sites:read'
  | 'sites:write'
  | 'bundles:read'
  | 'bundles:write'
  | 'invocations:send'
  | 'deletions:send'
  | 'screenshots:send'
  | 'abuseScans:send'
  | 'sslRetries:send'
  | 'geoFilters:send'
  | 'builds:send'
  /** Queues the preparation of a published deployment's function Lambdas (the function-lambdas worker). */
  | 'functionLambdas:send'
  /** Queues completion callback attempts of queued invocations (the function-callbacks worker). */
  | 'callbacks:send'
  /** Makes, reads and deletes live tails' short-lived queues (lib/functions/tail.ts). */
  | 'tails:watch'
  /** Sends a watched function's events to its live tails' queues (the functions router and the container door). */
  | 'tails:send'
  /** Lists live tails' queues, reads their tags and age, and deletes those of watchers gone (the cloud sweep). */
  | 'tails:sweep'
  /** Starts, reads and stops builds of the platform's CodeBuild project (the builds worker). */
  | 'builds:run'
  | 'scheduler:write'
  | 'mail:send'
  /** Creates and deletes the Route 53 hosted zones of managed-DNS domains. */
  | 'dns:zones'
  /** Reads and updates the configuration of the domains' CloudFront distributions (their geo restriction). */
  | 'cdn:distributions'
  /** Lists the account's distributions and their tags; disables and deletes those no domain names (the sweep). */
  | 'cdn:sweep'
  /**
   * TLS of custom domains (lib/domains/tls.ts): ACM certificates, the domains'
   * CloudFront distributions, records in managed zones, and sending to the
   * SSL-retries queue and (after the last attempt) its dead-letter queue.
   */
  | 'tls:provision'
  /** Reads one secret of lib/resources.ts on cold start (the handler calls lib/aws/secrets.ts loadSecrets). */
  | `secrets:${SecretName}`;

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RouteRow {
  method: HttpMethod;
  /** API Gateway route path, with {param} segments. */
  path: string;
  /** Lambda entry, relative to the repository root. */
  handler: string;
  access: AccessRule;
  uses: readonly ResourceUse[];
  /** Lambda timeout in seconds (default 10). */
  timeoutSeconds?: number;
  /** Lambda memory in MB (default 512). */
  memoryMb?: number;
  /**
   * Packages the handler imports at run time from node_modules rather than
   * from its bundle (a bundler with its native binary, say): the stack keeps
   * them out of the bundle and copies them from the repository's node_modules
   * into the Lambda asset, with no install at synth. The Lambda runs on the
   * architecture the copied binaries were installed for.
   */
  runtimePackages?: { names: readonly string[]; architecture: 'x86_64' | 'arm64' };
  /**
   * The reply is a stream (lib/http/streaming.ts): the handler exports `answer` for the local server, and in the
   * cloud the route is a response-streaming function URL behind the console's distribution, not an HTTP API
   * route (whose replies are buffered and end at 30 s).
   */
  streaming?: boolean;
  /** For the OpenAPI document: what the caller must know beyond the access rule, and request headers it must send (name: meaning). */
  docs?: { note?: string; requiredHeaders?: Readonly<Record<string, string>> };
}

/**
 * What publishing uses (the upload's finalize): the finalize route holds it, and so does the builds worker, which
 * publishes through the same steps. One list, so a new step's grant reaches both.
 */
export const publishUses: readonly ResourceUse[] = [
  'table:read',
  'table:write',
  'bundles:read',
  'bundles:write',
  'sites:read',
  'sites:write',
  'scheduler:write',
  'screenshots:send',
  'abuseScans:send',
  'functionLambdas:send',
];
