import { refreshSecret } from '../aws/secrets.ts';
import { config } from '../config.ts';
import { decryptEnvValue } from '../env/encryption.ts';
import { queryAll } from '../db/query.ts';
import { keys } from '../db/keys.ts';
import { rootPrefix } from '../sites/root-directory.ts';
import { checkIssuerAddress } from '../sso/address-guard.ts';
import type { BuildJob } from './host.ts';
import { forgeAudienceTeam } from '../git/forge-audiences.ts';
import { mintForgeToken, openAccessToken } from '../git/git-secrets.ts';
import { buildSettings } from './presets.ts';
import type { ProjectItem } from '../projects/records.ts';
import type { DeploymentItem } from '../deployments/records.ts';
import type { EnvVariableItem } from '../env/records.ts';

/**
 * A build's job, assembled by the worker right before the host starts it:
 * settings with the framework's defaults, the repository address checked,
 * the credential of the project's `git_auth_mode`, and the project's
 * environment variables of the build's environment, decrypted here and
 * nowhere else.
 */
export class BuildSetupError extends Error {}

/**
 * In the cloud a repository is `https` on a public address (checked like SSO
 * discovery: every resolved address public, no credentials in the URL); the
 * local platform also accepts `http` on loopback (GIT_ALLOW_LOOPBACK_HTTP).
 */
export async function checkRepoUrl(address: string): Promise<URL> {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    throw new BuildSetupError(`The repository address is not a URL: ${address}`);
  }
  const check = await checkIssuerAddress(url, { allowLoopbackHttp: config.gitAllowLoopbackHttp() });
  if (check.ok) return url;
  const why = 'unresolvable' in check ? 'its host name does not resolve' : `it is refused (${check.refusal})`;
  throw new BuildSetupError(
    `The repository ${url.host}${url.pathname} cannot be fetched: ${why}. Builds fetch https repositories on public addresses.`,
  );
}

/** How long a warm worker signs with the forge key set it read (a rotation announces its key 15 minutes ahead). */
const FORGE_KEY_REFRESH_MS = 5 * 60 * 1000;

/**
 * The Authorization header of the fetch, by `git_auth_mode` (empty is `pat`); null when the project has no credential.
 * A forge token is minted only for an audience registered to the project's team, checked here, right before.
 */
export async function gitAuthorization(project: ProjectItem, repository?: string): Promise<string | null> {
  const projectId = project.id;
  if (project.git_auth_mode === 'forge_jwt') {
    const audience = project.forge_audience;
    if (typeof audience !== 'string' || !audience) throw new BuildSetupError('git_auth_mode is forge_jwt but forge_audience is empty.');
    if ((await forgeAudienceTeam(audience)) !== project.team_id)
      throw new BuildSetupError(
        `The forge audience ${audience} is not registered to this team, so no forge token is minted for it: a team admin registers it (POST /api/v1/team/forge-audiences).`,
      );
    await refreshSecret('forgeSigning', FORGE_KEY_REFRESH_MS);
    return `Bearer ${mintForgeToken({ teamId: project.team_id, projectId, audience, repository })}`;
  }
  if (typeof project.git_access_token_sealed !== 'string') return null;
  const token = openAccessToken(projectId, project.git_access_token_sealed);
  return `Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`;
}

/** The project's variables of one environment, decrypted (only here, for a build about to start). */
export async function buildEnvironment(projectId: string, environment: 'production' | 'preview'): Promise<Record<string, string>> {
  const { pk, skPrefix } = keys.envVariablePrefix(projectId, environment);
  const items = await queryAll<EnvVariableItem>({
    TableName: config.tableName(),
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix },
  });
  const env: Record<string, string> = {};
  for (const item of items) {
    if (!Array.isArray(item.targets) || !item.targets.includes('build')) continue;
    const name = item.name;
    env[name] = decryptEnvValue(item.value_sealed, { projectId, environment, name });
  }
  return env;
}

export async function prepareBuildJob(project: ProjectItem, build: DeploymentItem): Promise<BuildJob> {
  if (typeof project.git_repo_url !== 'string' || !project.git_repo_url)
    throw new BuildSetupError('The project has no git_repo_url to build from.');
  const url = await checkRepoUrl(project.git_repo_url);
  const production = build.target === 'production';
  const settings = buildSettings(project);
  return {
    deploymentId: build.id,
    projectId: project.id,
    teamId: project.team_id,
    git: {
      url: url.href,
      commit: build.commit_sha ?? null,
      // A build from git always has its branch.
      ref: build.branch ?? '',
      authorization: await gitAuthorization(project, `${url.protocol}//${url.host}${url.pathname}`),
      displayUrl: `${url.protocol}//${url.host}${url.pathname}`,
    },
    rootDirectory: project.root_directory ?? null,
    rootPrefix: rootPrefix(project.root_directory),
    packageManager: project.package_manager ?? null,
    buildCommand: settings.buildCommand,
    outputDir: settings.outputDir,
    includeFunctions: production,
    env: await buildEnvironment(project.id, production ? 'production' : 'preview'),
    budgetMs: config.buildTimeBudgetMs(),
    memoryMb: config.buildMemoryMb(),
    heartbeatMs: config.buildHeartbeatMs(),
  };
}
