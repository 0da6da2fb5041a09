import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { createHostedZone, deleteHostedZone } from '../aws/route53-lite.ts';
import { config } from '../config.ts';
import { keys } from '../db/keys.ts';

export interface ManagedZone {
  /** Route 53's id (`Z...`), kept in the table, never shown. */
  hostedZoneId: string;
  /** The spec's integer `cdn_dns_zone_id`. */
  zoneNumber: number;
  nameServers: string[];
}

/** The next integer zone id: one atomic counter, so two zones never share a number. */
async function nextZoneNumber(): Promise<number> {
  const reply = await dynamo().send(
    new UpdateCommand({
      TableName: config.tableName(),
      Key: keys.dnsZoneCounter(),
      UpdateExpression: 'ADD #n :one',
      ExpressionAttributeNames: { '#n': 'value' },
      ExpressionAttributeValues: { ':one': 1 },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return Number(reply.Attributes!.value);
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

/** Removes a managed zone; one already gone is fine (a retried removal). */
export async function deleteManagedZone(hostedZoneId: string): Promise<void> {
  try {
    await deleteHostedZone(hostedZoneId);
  } catch (error) {
    if ((error as Error).name !== 'NoSuchHostedZone') throw error;
  }
}

/** A DNS name as compared: lower case, no trailing dot. */
export const normalizeName = (name: string) => name.toLowerCase().replace(/\.$/, '');
