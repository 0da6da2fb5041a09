import { config } from '../config.ts';
import { pickFields } from '../json.ts';

export const FRAMEWORKS = ['nextjs', 'sveltekit', 'astro', 'hugo', 'vite', 'gatsby', 'jekyll', 'static-html', 'other'] as const;
export const PACKAGE_MANAGERS = ['npm', 'pnpm', 'yarn', 'bun'] as const;
export const PREVIEW_BRANCH_MODES = ['all', 'none', 'custom'] as const;
export const PLATFORM_URL_MODES = ['redirect', 'serve'] as const;
export const GIT_AUTH_MODES = ['pat', 'forge_jwt'] as const;
export const CREATED_CLIENTS = ['dashboard', 'cli', 'mcp', 'migrate'] as const;

/** A project as the API returns it: every field of the spec's Project table, in its order. */
export interface Project {
  id: string;
  team_id: string;
  name: string;
  slug: string;
  subdomain: string;
  production_url: string;
  status: 'active' | 'deleting';
  framework: (typeof FRAMEWORKS)[number];
  build_command: string | null;
  output_dir: string | null;
  root_directory: string | null;
  package_manager: (typeof PACKAGE_MANAGERS)[number] | null;
  default_branch: string | null;
  repo_default_branch: string | null;
  git_provider: string | null;
  git_repo_url: string | null;
  git_connection_id: string | null;
  git_auth_mode: (typeof GIT_AUTH_MODES)[number] | null;
  forge_audience: string | null;
  auto_deploy_enabled: boolean;
  auto_deploy_paused_at: string | null;
  auto_deploy_pause_reason: string | null;
  consecutive_build_failures: number;
  last_build_failure_message: string | null;
  mr_previews_enabled: boolean;
  preview_branch_mode: (typeof PREVIEW_BRANCH_MODES)[number];
  preview_branch_include: string[];
  preview_branch_exclude: string[];
  preview_slug: string | null;
  primary_domain_id: string | null;
  platform_url_mode: (typeof PLATFORM_URL_MODES)[number];
  production_branch_deleted_at: string | null;
  live_deployment_id: string | null;
  cdn_pull_zone_id: number | null;
  cdn_edge_rule_guid: string | null;
  cdn_not_found_edge_rule_guid: string | null;
  analytics_enabled: boolean;
  provisional_until: string | null;
  created_via: 'session' | 'push' | 'api_key' | null;
  created_client: (typeof CREATED_CLIENTS)[number] | null;
  created_at: string;
  updated_at: string;
}

/** Stored fields: the Project table minus production_url, which follows from the subdomain and configuration. */
export type ProjectRecord = Omit<Project, 'production_url'>;

const PROJECT_FIELDS: readonly (keyof Project)[] = [
  'id',
  'team_id',
  'name',
  'slug',
  'subdomain',
  'production_url',
  'status',
  'framework',
  'build_command',
  'output_dir',
  'root_directory',
  'package_manager',
  'default_branch',
  'repo_default_branch',
  'git_provider',
  'git_repo_url',
  'git_connection_id',
  'git_auth_mode',
  'forge_audience',
  'auto_deploy_enabled',
  'auto_deploy_paused_at',
  'auto_deploy_pause_reason',
  'consecutive_build_failures',
  'last_build_failure_message',
  'mr_previews_enabled',
  'preview_branch_mode',
  'preview_branch_include',
  'preview_branch_exclude',
  'preview_slug',
  'primary_domain_id',
  'platform_url_mode',
  'production_branch_deleted_at',
  'live_deployment_id',
  'cdn_pull_zone_id',
  'cdn_edge_rule_guid',
  'cdn_not_found_edge_rule_guid',
  'analytics_enabled',
  'provisional_until',
  'created_via',
  'created_client',
  'created_at',
  'updated_at',
];

/** The fields of the project object returned by promote, exactly as the spec lists them. */
export const PROMOTE_FIELDS = [
  'auto_deploy_enabled',
  'build_command',
  'cdn_edge_rule_guid',
  'cdn_not_found_edge_rule_guid',
  'cdn_pull_zone_id',
  'created_at',
  'default_branch',
  'framework',
  'git_connection_id',
  'git_provider',
  'git_repo_url',
  'id',
  'live_deployment_id',
  'mr_previews_enabled',
  'name',
  'output_dir',
  'package_manager',
  'preview_branch_exclude',
  'preview_branch_include',
  'preview_branch_mode',
  'production_url',
  'root_directory',
  'slug',
  'status',
  'subdomain',
  'team_id',
  'updated_at',
] as const satisfies readonly (keyof Project)[];

export function productionUrl(subdomain: string): string {
  return `${config.publicScheme()}://${subdomain}.${config.siteDomain()}${config.publicPortSuffix()}`;
}

/**
 * The settings a save (PATCH) or a create may write, each with a new
 * project's value: the one list of them. A direct upload publishes built
 * files, so nothing is known about a framework or build ('other', no
 * commands); Git is not connected; previews follow every branch once it is;
 * analytics is on.
 */
const NEW_PROJECT_SETTINGS = {
  framework: 'other',
  build_command: null,
  output_dir: null,
  root_directory: null,
  package_manager: null,
  default_branch: null,
  git_provider: null,
  git_repo_url: null,
  git_connection_id: null,
  git_auth_mode: null,
  forge_audience: null,
  auto_deploy_enabled: false,
  mr_previews_enabled: true,
  preview_branch_mode: 'all',
  preview_branch_include: [],
  preview_branch_exclude: [],
  platform_url_mode: 'serve',
  analytics_enabled: true,
} satisfies Partial<ProjectRecord>;

export type SettingsField = keyof typeof NEW_PROJECT_SETTINGS;
export const SETTINGS_FIELDS = Object.keys(NEW_PROJECT_SETTINGS) as readonly SettingsField[];

/** A new project: its settings' values above, no system state yet. */
export function newProjectRecord(input: {
  id: string;
  teamId: string;
  name: string;
  subdomain: string;
  now: string;
  provisionalUntil: string | null;
  createdVia: Project['created_via'];
  createdClient: Project['created_client'];
}): ProjectRecord {
  return {
    ...NEW_PROJECT_SETTINGS,
    // Fresh arrays: a record is written and may be changed; the defaults are shared.
    preview_branch_include: [],
    preview_branch_exclude: [],
    id: input.id,
    team_id: input.teamId,
    name: input.name,
    // The storage key is fixed at creation; the subdomain may move later, the slug never.
    slug: input.subdomain,
    subdomain: input.subdomain,
    status: 'active',
    repo_default_branch: null,
    auto_deploy_paused_at: null,
    auto_deploy_pause_reason: null,
    consecutive_build_failures: 0,
    last_build_failure_message: null,
    preview_slug: null,
    primary_domain_id: null,
    production_branch_deleted_at: null,
    live_deployment_id: null,
    cdn_pull_zone_id: null,
    cdn_edge_rule_guid: null,
    cdn_not_found_edge_rule_guid: null,
    provisional_until: input.provisionalUntil,
    created_via: input.createdVia,
    created_client: input.createdClient,
    created_at: input.now,
    updated_at: input.now,
  };
}

/** The API shape of a stored project item. */
export function toProject(item: ProjectRecord): Project {
  // Each field the spec lists and nothing else of the item (keys, sealed secrets); a field an older item lacks is null.
  const project = {} as Project;
  for (const field of PROJECT_FIELDS) {
    Object.assign(project, { [field]: field === 'production_url' ? productionUrl(item.subdomain) : (item[field] ?? null) });
  }
  return project;
}

export function promoteView(project: Project): Pick<Project, (typeof PROMOTE_FIELDS)[number]> {
  return pickFields(project, PROMOTE_FIELDS);
}
