/** An upload session's item: opened by begin-upload (sessions.ts), finalized by publishing. */
export interface UploadSessionRecord {
  upload_id: string;
  deployment_id: string;
  project_id: string;
  /** The project's slug, immutable: uploads store their files under `{team_id}/{slug}/{deployment_id}/`. */
  project_slug: string;
  team_id: string;
  status: 'open' | 'finalized';
  label: string | null;
  created_at: string;
  expires_at: string;
  /** BUNDLES key of the manifest JSON: a large manifest does not fit in one item. */
  manifest_key: string;
  file_count: number;
  total_bytes: number;
  known_count: number;
  missing_count: number;
  total_bytes_to_send: number;
  /** A build's session (lib/publishing/begin-build-upload.ts): publish as production or beside it as a preview. Uploads are production. */
  target?: 'production' | 'preview';
  /** A build's branch, the keyword scan's row key. */
  branch?: string | null;
  /** False for a build's session, which takes no place among the team's open upload sessions. */
  holds_slot?: boolean;
}
