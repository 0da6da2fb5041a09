import { config } from '../config.ts';
import { AwsLiteError, backoff, CredentialsMissingError, signer } from './signer.ts';

/**
 * The geo restriction of a distribution, set as two signed `fetch` calls in
 * CloudFront's REST-XML protocol: GetDistributionConfig, then
 * UpdateDistribution of the same document with its <Restrictions> element
 * replaced and If-Match set to the ETag read. The CloudFront client carries
 * the shapes of every CloudFront operation, about 135 KB of a bundle, which
 * put the geo-filter handler over the 350 KB handler budget (docs/deploy.md,
 * "Handler bundles"). The rest of the configuration goes back byte for byte
 * as CloudFront sent it, so nothing this code does not know is lost. Errors
 * carry CloudFront's code as `name` (PreconditionFailed, NoSuchDistribution)
 * and the status in `$metadata.httpStatusCode`, as the SDK's do; network
 * failures, 5xx and throttling are retried three times in all with jittered
 * backoff.
 */

const API = '2020-05-31';
const MAX_ATTEMPTS = 3;
const RETRYABLE = new Set(['Throttling', 'ThrottlingException', 'ServiceUnavailable', 'InternalError']);

const xmlEscape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
const firstText = (xml: string, tag: string) => new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(xml)?.[1];

/** CloudFront is global: its API answers at one endpoint, signed for us-east-1. */
const endpoint = () => config.awsEndpoint()?.replace(/\/+$/, '') ?? 'https://cloudfront.amazonaws.com';

async function send(
  method: 'GET' | 'PUT',
  path: string,
  init: { body?: string; ifMatch?: string } = {},
): Promise<{ text: string; etag: string | null }> {
  const aws = signer('cloudfront', 'us-east-1');
  for (let attempt = 1; ; attempt++) {
    let res: Response;
    try {
      const headers: Record<string, string> = {};
      if (init.body !== undefined) headers['content-type'] = 'application/xml';
      if (init.ifMatch !== undefined) headers['if-match'] = init.ifMatch;
      res = await fetch(
        await aws.sign(`${endpoint()}/${API}/${path}`, { method, headers, ...(init.body !== undefined ? { body: init.body } : {}) }),
      );
    } catch (error) {
      if (error instanceof CredentialsMissingError || attempt >= MAX_ATTEMPTS) throw error;
      await backoff(attempt);
      continue;
    }
    const text = await res.text().catch(() => '');
    if (res.ok) return { text, etag: res.headers.get('etag') };
    const code = firstText(text, 'Code') ?? `Http${res.status}`;
    if (attempt < MAX_ATTEMPTS && (res.status >= 500 || res.status === 429 || RETRYABLE.has(code))) {
      await backoff(attempt);
      continue;
    }
    throw new AwsLiteError(code, firstText(text, 'Message') ?? `CloudFront answered ${res.status}`, res.status);
  }
}

export interface GeoRestrictionInput {
  restrictionType: 'whitelist' | 'blacklist' | 'none';
  locations: string[];
}

/** The <Restrictions> element of a DistributionConfig document. */
export function restrictionsXml(input: GeoRestrictionInput): string {
  const items = input.locations.length
    ? `<Items>${input.locations.map((l) => `<Location>${xmlEscape(l)}</Location>`).join('')}</Items>`
    : '';
  return `<Restrictions><GeoRestriction><RestrictionType>${input.restrictionType}</RestrictionType><Quantity>${input.locations.length}</Quantity>${items}</GeoRestriction></Restrictions>`;
}

/**
 * The document with its <Restrictions> replaced. CloudFront always returns
 * one; should it be missing, it goes where the schema's sequence has it
 * (before <WebACLId>), else last.
 */
export function withRestrictions(document: string, restrictions: string): string {
  const existing = /<Restrictions\s*\/>|<Restrictions>[\s\S]*?<\/Restrictions>/;
  if (existing.test(document)) return document.replace(existing, () => restrictions);
  const before = /<WebACLId[\s>/]|<\/DistributionConfig>/.exec(document);
  if (!before) throw new AwsLiteError('MalformedReply', 'GetDistributionConfig answered without a DistributionConfig document.', 200);
  return document.slice(0, before.index) + restrictions + document.slice(before.index);
}

/**
 * Sets the distribution's geo restriction, leaving the rest of its
 * configuration as it is. The If-Match of the ETag read makes CloudFront
 * refuse the update (PreconditionFailed) when another writer changed the
 * configuration in between, instead of writing over that change.
 */
export async function setGeoRestriction(distributionId: string, input: GeoRestrictionInput): Promise<void> {
  const path = `distribution/${encodeURIComponent(distributionId)}/config`;
  const current = await send('GET', path);
  if (!current.etag) throw new AwsLiteError('MalformedReply', 'GetDistributionConfig answered without an ETag.', 200);
  await send('PUT', path, { body: withRestrictions(current.text, restrictionsXml(input)), ifMatch: current.etag });
}
