import { useState } from 'preact/hooks';
import { navigate } from '../router.tsx';
import { api, canAdmin, useSession } from '../session.ts';
import { CopyButton, ErrorNote, Field, formatTime, Notice, useAction } from '../ui.tsx';
import type { Project } from '../api-types.ts';
import { AnalyticsFieldset, BuildFieldset, type Draft, type FieldsetProps, GitFieldset, PreviewFieldset } from './settings-fieldsets.tsx';

const text = (p: Project, f: keyof Project) => (p[f] as string | null | undefined) ?? '';
const lines = (value: unknown) => (Array.isArray(value) ? value.join('\n') : '');

function draftOf(p: Project): Draft {
  return {
    framework: text(p, 'framework') || 'other',
    build_command: text(p, 'build_command'),
    output_dir: text(p, 'output_dir'),
    root_directory: text(p, 'root_directory'),
    package_manager: text(p, 'package_manager'),
    git_provider: text(p, 'git_provider'),
    git_repo_url: text(p, 'git_repo_url'),
    default_branch: text(p, 'default_branch'),
    git_auth_mode: text(p, 'git_auth_mode') || 'pat',
    forge_audience: text(p, 'forge_audience'),
    auto_deploy_enabled: p.auto_deploy_enabled === true,
    mr_previews_enabled: p.mr_previews_enabled === true,
    preview_branch_mode: text(p, 'preview_branch_mode') || 'all',
    preview_branch_include: lines(p.preview_branch_include),
    preview_branch_exclude: lines(p.preview_branch_exclude),
    analytics_enabled: p.analytics_enabled !== false,
  };
}

/** What a save sends: empty text is null (unset), pattern lists are one per line. */
function bodyOf(d: Draft) {
  const orNull = (v: string | boolean) => (typeof v === 'string' && v.trim() === '' ? null : v);
  const list = (v: string | boolean) =>
    String(v)
      .split('\n')
      .map((s) => s.trim())
      .filter(Boolean);
  return {
    framework: d.framework,
    build_command: orNull(d.build_command!),
    output_dir: orNull(d.output_dir!),
    root_directory: orNull(d.root_directory!),
    package_manager: orNull(d.package_manager!),
    git_provider: orNull(d.git_provider!),
    git_repo_url: orNull(d.git_repo_url!),
    default_branch: orNull(d.default_branch!),
    git_auth_mode: d.git_auth_mode,
    forge_audience: orNull(d.forge_audience!),
    auto_deploy_enabled: d.auto_deploy_enabled,
    mr_previews_enabled: d.mr_previews_enabled,
    preview_branch_mode: d.preview_branch_mode,
    preview_branch_include: list(d.preview_branch_include!),
    preview_branch_exclude: list(d.preview_branch_exclude!),
    analytics_enabled: d.analytics_enabled,
  };
}

export function SettingsTab(props: { project: Project; onSaved: () => void }) {
  const session = useSession();
  const [draft, setDraft] = useState<Draft>(() => draftOf(props.project));
  const [saved, setSaved] = useState(false);
  const action = useAction();
  const p = props.project;
  const input = (name: string, label: string, hint?: string) => (
    <Field
      label={label}
      name={name}
      value={draft[name] as string}
      hint={hint}
      error={action.fields[name]}
      onInput={(e) => setDraft({ ...draft, [name]: (e.target as HTMLInputElement).value })}
    />
  );
  const set = (name: string) => (value: string | boolean) => setDraft({ ...draft, [name]: value });
  const readOnly = !canAdmin(session);
  const fieldsets: FieldsetProps = { draft, set, input, errors: action.fields, readOnly };
  return (
    <section aria-labelledby="settings-title">
      <h2 id="settings-title">Settings</h2>
      {readOnly && <Notice>Only team admins and owners can change settings; you can read them.</Notice>}
      {p.auto_deploy_paused_at ? (
        <Notice>
          Auto-deploy is paused since {formatTime(p.auto_deploy_paused_at as string)} after {String(p.consecutive_build_failures)} failed
          builds: {String(p.last_build_failure_message ?? '')}
        </Notice>
      ) : null}
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          setSaved(false);
          const done = await action.run(() => api.patch(`/projects/${p.id}`, bodyOf(draft)));
          if (done) {
            setSaved(true);
            props.onSaved();
          }
        }}
      >
        <BuildFieldset {...fieldsets} />
        <GitFieldset {...fieldsets} />
        <PreviewFieldset {...fieldsets} />
        <AnalyticsFieldset {...fieldsets} />
        <ErrorNote error={action.error} />
        {saved && <Notice>Settings saved.</Notice>}
        {!readOnly && (
          <button type="submit" disabled={action.busy}>
            {action.busy ? 'Saving…' : 'Save settings'}
          </button>
        )}
      </form>
      {p.git_repo_url ? <GitWebhook project={p} readOnly={readOnly} /> : null}
      {!readOnly && <DeleteProject project={p} />}
    </section>
  );
}

/**
 * Where the forge sends pushes (docs/builds.md): the webhook URLs on this origin (the API's), the webhook
 * secret made here and shown once (making another stops the previous one matching), and whether a push to
 * the production branch deploys.
 */
function GitWebhook({ project, readOnly }: { project: Project; readOnly: boolean }) {
  const make = useAction();
  const [secret, setSecret] = useState<string | null>(null);
  const base = `${location.origin}/api/v1/webhooks/git`;
  const paused = Boolean(project.auto_deploy_paused_at);
  return (
    <section aria-labelledby="webhook-title">
      <h3 id="webhook-title">Git webhook</h3>
      <p>Point the repository's push and merge-request webhook here, with the webhook secret:</p>
      <dl class="webhook-urls">
        <dt>GitHub (content type application/json; the secret as "Secret")</dt>
        <dd>
          <code>{`${base}/github`}</code> <CopyButton text={`${base}/github`} label="Copy GitHub URL" />
        </dd>
        <dt>GitLab (the secret as "Secret token")</dt>
        <dd>
          <code>{`${base}/gitlab`}</code> <CopyButton text={`${base}/gitlab`} label="Copy GitLab URL" />
        </dd>
      </dl>
      <p data-testid="auto-deploy-state">
        Auto-deploy is{' '}
        {project.auto_deploy_enabled
          ? paused
            ? 'on but paused by failed builds: pushes are recorded as skipped.'
            : `on: a push to ${project.default_branch ? String(project.default_branch) : "the repository's default branch"} goes live.`
          : 'off: pushes to the production branch are ignored (other branches still build previews by the policy above).'}
      </p>
      {secret ? (
        <div role="status">
          <label for="webhook-secret">New webhook secret, shown this once</label>
          <input id="webhook-secret" readOnly value={secret} />
          <CopyButton text={secret} label="Copy secret" />
          <p>Put it in the forge's webhook settings now; deliveries signed with an earlier secret no longer match.</p>
        </div>
      ) : null}
      <ErrorNote error={make.error} />
      {!readOnly && (
        <button
          type="button"
          disabled={make.busy}
          onClick={async () => {
            const made = await make.run(() => api.post<{ secret: string }>(`/projects/${project.id}/git/webhook-secret`));
            if (made) setSecret(made.secret);
          }}
        >
          {make.busy ? 'Making…' : secret ? 'Rotate the webhook secret' : 'Make a webhook secret'}
        </button>
      )}
      {!readOnly && <p class="hint">Making a secret replaces the project's current one, if it has one.</p>}
    </section>
  );
}

/** The danger zone: deleting the project, after a confirmation. */
function DeleteProject({ project }: { project: Project }) {
  const remove = useAction();
  return (
    <section aria-labelledby="danger-title" class="danger">
      <h3 id="danger-title">Delete this project</h3>
      <p>Its deployments, files and domains are removed. This cannot be undone.</p>
      <ErrorNote error={remove.error} />
      <button
        type="button"
        class="danger-button"
        disabled={remove.busy}
        onClick={async () => {
          if (!confirm(`Delete ${project.name} for good?`)) return;
          if (await remove.run(() => api.del(`/projects/${project.id}`))) navigate('/');
        }}
      >
        Delete project
      </button>
    </section>
  );
}
