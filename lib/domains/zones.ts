import {
  ChangeResourceRecordSetsCommand,
  DeleteHostedZoneCommand,
  ListResourceRecordSetsCommand,
  type ResourceRecordSet,
} from '@aws-sdk/client-route-53';
import { createHostedZone } from '../aws/route53-lite.ts';
import { route53 } from '../aws/route53.ts';
import { nextZoneNumber } from './tls-records.ts';

export interface ManagedZone {
  /** Route 53's id (`Z...`), kept in the table, never shown. */
  hostedZoneId: string;
  /** The spec's integer `cdn_dns_zone_id`. */
  zoneNumber: number;
  nameServers: string[];
}

/**
 * The Route 53 hosted zone of a managed-DNS domain. The domain id is the
 * caller reference, so a retried creation returns the same zone instead of
 * making a second one.
 */
export async function createManagedZone(hostname: string, domainId: string): Promise<ManagedZone> {
  const zoneNumber = await nextZoneNumber();
  const zone = await createHostedZone({ name: hostname, callerReference: domainId, comment: `Slipway managed DNS of domain ${domainId}` });
  return { hostedZoneId: zone.id, zoneNumber, nameServers: zone.nameServers.map(normalizeName) };
}

/**
 * The records TLS wrote into a managed zone (the certificate's validation
 * CNAME, the routing record to the distribution): Route 53 deletes only a zone
 * that holds nothing but its own NS and SOA, so they go first.
 */
async function emptyManagedZone(hostedZoneId: string): Promise<void> {
  const own: ResourceRecordSet[] = [];
  let start: { name?: string; type?: string } = {};
  for (;;) {
    const page = await route53().send(
      new ListResourceRecordSetsCommand({ HostedZoneId: hostedZoneId, StartRecordName: start.name, StartRecordType: start.type as never }),
    );
    own.push(...(page.ResourceRecordSets ?? []).filter((r) => r.Type !== 'NS' && r.Type !== 'SOA'));
    if (!page.IsTruncated) break;
    start = { name: page.NextRecordName, type: page.NextRecordType };
  }
  if (own.length === 0) return;
  await route53().send(
    new ChangeResourceRecordSetsCommand({
      HostedZoneId: hostedZoneId,
      ChangeBatch: { Changes: own.map((r) => ({ Action: 'DELETE', ResourceRecordSet: r })) },
    }),
  );
}

/** Removes a managed zone and the records TLS put in it; one already gone is fine (a retried removal). */
export async function deleteManagedZone(hostedZoneId: string): Promise<void> {
  // A TLS attempt still running for the domain may write a record between the emptying and the delete
  // (HostedZoneNotEmpty): the zone is emptied again, a few times, before the removal gives up.
  for (let attempt = 1; ; attempt++) {
    try {
      await emptyManagedZone(hostedZoneId);
      await route53().send(new DeleteHostedZoneCommand({ Id: hostedZoneId }));
      return;
    } catch (error) {
      const name = (error as Error).name;
      if (name === 'NoSuchHostedZone') return;
      if (name !== 'HostedZoneNotEmpty' || attempt >= 4) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }
}

/** A DNS name as compared: lower case, no trailing dot. */
export const normalizeName = (name: string) => name.toLowerCase().replace(/\.$/, '');
