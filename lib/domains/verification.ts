import { Resolver } from 'node:dns/promises';
import { config } from '../config.ts';
import { ApiError } from '../errors/api-error.ts';
import { DNS_LOOKUP_UNAVAILABLE } from '../errors/catalogue/domains.ts';
import { VERIFICATION_LABEL, type DomainRecord } from './domains.ts';
import { updateDomain, type DomainItem } from './records.ts';
import { logger } from '../logger.ts';
import { queueFirstAttempt } from './tls-queue.ts';
import { normalizeName } from './zones.ts';

/**
 * A resolver over the configured servers (DNS_RESOLVER), or the machine's own
 * when none are set. New per verification: the configuration may change
 * between calls (tests point it at their own server), and a look-up is rare.
 */
function resolver(): Resolver {
  const r = new Resolver({ timeout: config.dnsTimeoutMs(), tries: 2 });
  const servers = config.dnsResolvers();
  if (servers.length) r.setServers(servers);
  return r;
}

/** Answers that say the name has no such record: the customer's DNS is not set up (yet). */
const NO_RECORD = new Set(['ENOTFOUND', 'ENODATA', 'ESERVFAIL', 'EREFUSED', 'ENONAME']);

/** Records of a name, [] when it has none; a resolver that does not answer is our failure, not the customer's. */
async function lookUp<T>(query: () => Promise<T[]>): Promise<T[]> {
  try {
    return await query();
  } catch (error) {
    if (NO_RECORD.has((error as NodeJS.ErrnoException).code ?? '')) return [];
    throw new ApiError(DNS_LOOKUP_UNAVAILABLE, { details: { reason: (error as NodeJS.ErrnoException).code ?? 'unknown' } });
  }
}

/** Whether the verification TXT record holds the domain's token (a TXT answer comes in chunks of up to 255 bytes). */
export async function hasVerificationRecord(hostname: string, token: string): Promise<boolean> {
  const records = await lookUp(() => resolver().resolveTxt(`${VERIFICATION_LABEL}.${hostname}`));
  return records.some((chunks) => chunks.join('').trim() === token);
}

/** Whether the hostname's NS records name both of our zone's servers (the registrar delegated to us). */
export async function isDelegated(hostname: string, nameServers: string[]): Promise<boolean> {
  const found = new Set((await lookUp(() => resolver().resolveNs(hostname))).map(normalizeName));
  return nameServers.length > 0 && nameServers.every((ns) => found.has(normalizeName(ns)));
}

/**
 * One verification attempt, by real DNS look-ups.
 * - byo_dns, `pending_verification` or `failed`: the TXT record with the token
 *   makes it `verified`; its absence makes it `failed` (it can be asked again).
 * - managed_dns, `awaiting_delegation`: our name servers in the hostname's NS
 *   records make it `verified` with `ns_delegated_at`; otherwise it keeps waiting.
 * - `verified`: nothing to check; answered as it is.
 * Every attempt that looked sets `last_verification_attempt`. The write is
 * conditional on the status read, so a racing removal or attempt wins cleanly.
 */
export async function verifyDomain(item: DomainItem, now = new Date()): Promise<DomainItem> {
  const after = await verifyOnce(item, now);
  if (item.status !== 'verified' && after.status === 'verified') {
    // TLS is next: the SSL-retries worker makes the first attempt at once. Should the queue refuse, the
    // domain stays verified with ssl_status pending and POST retry-ssl starts it.
    try {
      await queueFirstAttempt(after);
    } catch (error) {
      logger.error('ssl: first attempt not queued', { domain_id: after.id, error: (error as Error).name });
    }
  }
  return after;
}

async function verifyOnce(item: DomainItem, now: Date): Promise<DomainItem> {
  const record = item as unknown as DomainRecord;
  if (record.status === 'verified') return item;
  const at = now.toISOString();
  if (record.connection_mode === 'managed_dns') {
    const servers = [record.cdn_dns_ns1, record.cdn_dns_ns2].filter((s): s is string => Boolean(s));
    if (await isDelegated(record.domain, servers)) {
      return updateDomain(record.id, record.status, {
        status: 'verified',
        ns_delegated_at: at,
        verified_at: at,
        last_verification_attempt: at,
        updated_at: at,
      });
    }
    return updateDomain(record.id, record.status, { last_verification_attempt: at, updated_at: at });
  }
  const found = await hasVerificationRecord(record.domain, record.verification_token);
  return updateDomain(record.id, record.status, {
    status: found ? 'verified' : 'failed',
    ...(found ? { verified_at: at } : {}),
    last_verification_attempt: at,
    updated_at: at,
  });
}
