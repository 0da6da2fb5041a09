import { randomUUID } from 'node:crypto';
import { GetHostedZoneCommand } from '@aws-sdk/client-route-53';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { route53 } from '../../lib/aws/route53.ts';
import { createHostedZone, deleteHostedZone } from '../../lib/aws/route53-lite.ts';
import { deleteManagedZone } from '../../lib/domains/zones.ts';

const saved = { ...process.env };
beforeAll(() => {
  // The shared moto of the run: nothing here may reach the real Route 53.
  process.env = {
    ...saved,
    AWS_ENDPOINT_URL: inject('awsEndpoint'),
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_REGION: 'us-east-1',
  };
});
afterAll(() => {
  process.env = saved;
});

/** Managed DNS's two Route 53 calls without the SDK (lib/aws/route53-lite.ts), read back through the SDK's client. */
describe('Route 53 hosted zones through signed fetch calls', () => {
  it('creates a zone the SDK reads back with the same name servers; deletes it; a second delete is NoSuchHostedZone, 404', async () => {
    const name = `r53-${randomUUID().slice(0, 8)}.example.com`;
    const zone = await createHostedZone({ name, callerReference: randomUUID(), comment: 'a comment with <xml> & "quotes"' });
    expect(zone.id).toMatch(/^[A-Z0-9]+$/);
    const read = await route53().send(new GetHostedZoneCommand({ Id: zone.id }));
    expect(read.HostedZone!.Name).toBe(`${name}.`);
    expect(read.HostedZone!.Config?.Comment).toBe('a comment with <xml> & "quotes"');
    expect(zone.nameServers).toEqual(read.DelegationSet!.NameServers);
    expect(zone.nameServers.length).toBeGreaterThanOrEqual(2);

    await deleteHostedZone(zone.id);
    await expect(route53().send(new GetHostedZoneCommand({ Id: zone.id }))).rejects.toMatchObject({ name: 'NoSuchHostedZone' });
    await expect(deleteHostedZone(zone.id)).rejects.toMatchObject({ name: 'NoSuchHostedZone', $metadata: { httpStatusCode: 404 } });
    // A retried removal of a managed domain finds the zone gone and is content.
    await expect(deleteManagedZone(zone.id)).resolves.toBeUndefined();
  });
});
