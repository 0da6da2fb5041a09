import type { ServingRules } from './serving-rules.ts';

/** What a deployment publishes beside its files: each path's object, as the site server reads it (lib/sites/deployment-files.ts). */
export interface RouteManifestFile {
  hash: string;
  size: number;
  content_type: string;
  /**
   * Where the object is, relative to `{team_id}/{slug}/`, when it is not this
   * deployment's own `{deployment_id}/{path}`: a file unchanged since an earlier
   * deployment of the same project is served from that deployment's folder
   * rather than copied again (`{earlier_deployment_id}/{its path}`).
   */
  object?: string;
}

export interface RouteManifest {
  project_slug: string;
  project_id: string;
  team_id: string;
  deployment_id: string;
  created_at: string;
  files: Record<string, RouteManifestFile>;
  /** The deployment's `_redirects` and `_headers`, compiled at publish; absent when it has neither (or predates them). */
  serving_rules?: ServingRules;
}
