import * as z from '../../../lib/schema.ts';
import { config } from '../../../lib/config.ts';
import { CONNECTION_MODES, newDomainRecord, toDomain } from '../../../lib/domains/domains.ts';
import { discardDomain, insertDomain, updateDomain } from '../../../lib/domains/records.ts';
import { parseCustomHostname } from '../../../lib/domains/hostname.ts';
import { createManagedZone } from '../../../lib/domains/zones.ts';
import { ApiError } from '../../../lib/errors/api-error.ts';
import { DNS_ZONE_UNAVAILABLE, DOMAIN_INVALID, DOMAIN_RESERVED } from '../../../lib/errors/catalogue/domains.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { loadProjectForCaller } from '../../../lib/projects/access.ts';

const body = z.object({
  domain: z.string().check(z.minLength(1), z.maxLength(253)),
  connection_mode: z.optional(z.enum(CONNECTION_MODES)),
});

export const handler = defineHandler('POST /api/v1/projects/{id}/domains', { body }, async (ctx) => {
  const { item: project } = await loadProjectForCaller(ctx, ctx.params.id!);
  const parsed = parseCustomHostname(ctx.body.domain);
  if ('problem' in parsed)
    throw new ApiError(parsed.problem === 'reserved' ? DOMAIN_RESERVED : DOMAIN_INVALID, { details: { domain: ctx.body.domain } });
  const record = newDomainRecord({
    teamId: project.team_id,
    projectId: project.id,
    hostname: parsed.hostname,
    isApex: parsed.isApex,
    mode: ctx.body.connection_mode ?? 'byo_dns',
    target: `${project.subdomain}.${config.siteDomain()}`,
    now: new Date().toISOString(),
  });
  // The claim first: a hostname another project holds must not cost a hosted zone.
  await insertDomain(record);
  if (record.connection_mode === 'byo_dns') {
    ctx.log.info('domain added', { domain_id: record.id, project_id: record.project_id, mode: record.connection_mode });
    return { status: 201, data: toDomain(record) };
  }
  let zone;
  try {
    zone = await createManagedZone(record.domain, record.id);
  } catch (error) {
    ctx.log.error('managed zone creation failed', { domain_id: record.id, error: (error as Error).name });
    await discardDomain(record);
    throw new ApiError(DNS_ZONE_UNAVAILABLE);
  }
  const item = await updateDomain(record.id, 'awaiting_delegation', {
    hosted_zone_id: zone.hostedZoneId,
    cdn_dns_zone_id: zone.zoneNumber,
    cdn_dns_ns1: zone.nameServers[0] ?? null,
    cdn_dns_ns2: zone.nameServers[1] ?? null,
  });
  ctx.log.info('domain added', { domain_id: record.id, project_id: record.project_id, mode: record.connection_mode });
  return { status: 201, data: toDomain(item) };
});
