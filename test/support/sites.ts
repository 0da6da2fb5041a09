import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../../lib/aws/clients.ts';
import { s3 } from '../../lib/aws/s3.ts';
import { config } from '../../lib/config.ts';
import { keys } from '../../lib/db/keys.ts';
import type { RouteManifest } from '../../lib/sites/route-manifest.ts';
import { deployedObjectKey, routeManifestKey } from '../../lib/sites/storage-keys.ts';

/**
 * Serving fixtures written straight to the table and the sites bucket in the
 * shapes of the sites data contract, so serving is tested on its own.
 */
export interface SiteFixture {
  projectId: string;
  teamId: string;
  slug: string;
  subdomain: string;
}

export const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

export async function putProjectFixture(options: { subdomain?: string; slug?: string; teamId?: string } = {}): Promise<SiteFixture> {
  const suffix = randomBytes(4).toString('hex');
  const fixture: SiteFixture = {
    projectId: randomUUID(),
    teamId: options.teamId ?? randomUUID(),
    slug: options.slug ?? `site-${suffix}`,
    subdomain: options.subdomain ?? `site-${suffix}`,
  };
  const now = new Date().toISOString();
  await dynamo().send(
    new PutCommand({
      TableName: config.tableName(),
      Item: {
        ...keys.project(fixture.projectId),
        ...keys.projectByTeam(fixture.teamId, now, fixture.projectId),
        id: fixture.projectId,
        team_id: fixture.teamId,
        name: fixture.slug,
        slug: fixture.slug,
        subdomain: fixture.subdomain,
        status: 'active',
        live_deployment_id: null,
        created_at: now,
        updated_at: now,
      },
    }),
  );
  await dynamo().send(
    new PutCommand({
      TableName: config.tableName(),
      Item: { ...keys.subdomainHold(fixture.subdomain), project_id: fixture.projectId, team_id: fixture.teamId },
    }),
  );
  return fixture;
}

const types: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  txt: 'text/plain; charset=utf-8',
  png: 'image/png',
};

/** Publishes files as a deployment (objects + route manifest); does not point production at it. */
export async function putDeploymentFixture(
  fixture: SiteFixture,
  files: Record<string, string | Buffer>,
  options: { manifestSlug?: string } = {},
): Promise<{ deploymentId: string; manifest: RouteManifest }> {
  const deploymentId = randomUUID();
  const manifest: RouteManifest = {
    project_slug: options.manifestSlug ?? fixture.slug,
    project_id: fixture.projectId,
    team_id: fixture.teamId,
    deployment_id: deploymentId,
    created_at: new Date().toISOString(),
    files: {},
  };
  for (const [path, content] of Object.entries(files)) {
    const bytes = Buffer.from(content);
    const contentType = types[path.split('.').pop() ?? ''] ?? 'application/octet-stream';
    manifest.files[path] = { hash: sha256(bytes), size: bytes.length, content_type: contentType };
    await s3().send(
      new PutObjectCommand({
        Bucket: config.bucket('sites'),
        Key: deployedObjectKey(fixture.teamId, manifest.project_slug, deploymentId, path),
        Body: bytes,
        ContentType: contentType,
      }),
    );
  }
  await s3().send(
    new PutObjectCommand({
      Bucket: config.bucket('sites'),
      Key: routeManifestKey(fixture.teamId, fixture.slug, deploymentId),
      Body: JSON.stringify(manifest),
      ContentType: 'application/json',
    }),
  );
  return { deploymentId, manifest };
}

export async function setLiveDeployment(fixture: SiteFixture, deploymentId: string | null): Promise<void> {
  await dynamo().send(
    new UpdateCommand({
      TableName: config.tableName(),
      Key: keys.project(fixture.projectId),
      UpdateExpression: 'SET live_deployment_id = :d',
      ExpressionAttributeValues: { ':d': deploymentId },
    }),
  );
}

export interface SiteResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  text: string;
}

/**
 * An HTTP request to the local platform with a given Host header. Node's
 * fetch neither resolves `*.localhost` here nor lets a caller set Host, so this
 * connects to 127.0.0.1 and names the site in Host, as a browser would.
 */
export function siteRequest(
  port: number,
  host: string,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<SiteResponse> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: { host, ...options.headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text: body.toString('utf8') });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}
