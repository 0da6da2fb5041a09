import type { JSX } from 'preact';
import { Checkbox, Select, TextArea } from '../ui.tsx';

/** A settings form's values, by field name. */
export type Draft = Record<string, string | boolean>;

/** The fieldsets of a project's settings form, each a part of the spec's Project fields. */

const FRAMEWORKS = ['nextjs', 'sveltekit', 'astro', 'hugo', 'vite', 'gatsby', 'jekyll', 'static-html', 'other'] as const;
const PACKAGE_MANAGERS: [string, string][] = [
  ['', 'Detect from the lockfile'],
  ['npm', 'npm'],
  ['pnpm', 'pnpm'],
  ['yarn', 'yarn'],
  ['bun', 'bun'],
];
const BRANCH_MODES: [string, string][] = [
  ['all', 'Every branch'],
  ['none', 'No branch'],
  ['custom', 'Branches matching the lists below'],
];
const AUTH_MODES: [string, string][] = [
  ['pat', 'Access token (pat)'],
  ['forge_jwt', 'Short-lived forge token (forge_jwt)'],
];

/** What every fieldset of the form is given: the draft, its setters and the save's field errors. */
export interface FieldsetProps {
  draft: Draft;
  set: (name: string) => (value: string | boolean) => void;
  input: (name: string, label: string, hint?: string) => JSX.Element;
  errors: Record<string, string | undefined>;
  readOnly: boolean;
}

export function BuildFieldset({ draft, set, input, errors, readOnly }: FieldsetProps) {
  return (
    <fieldset disabled={readOnly}>
      <legend>Build</legend>
      <Select
        label="Framework"
        name="framework"
        value={draft.framework as string}
        options={FRAMEWORKS}
        onChange={set('framework')}
        error={errors.framework}
      />
      {input('build_command', 'Build command')}
      {input('output_dir', 'Output folder')}
      {input('root_directory', 'Root directory', 'The functions/ folder is looked up inside it.')}
      <Select
        label="Package manager"
        name="package_manager"
        value={draft.package_manager as string}
        options={PACKAGE_MANAGERS}
        onChange={set('package_manager')}
      />
    </fieldset>
  );
}

export function GitFieldset({ draft, set, input, readOnly }: FieldsetProps) {
  return (
    <fieldset disabled={readOnly}>
      <legend>Git</legend>
      {input('git_provider', 'Git provider')}
      {input('git_repo_url', 'Repository URL')}
      {input('default_branch', 'Production branch')}
      <Select
        label="Git access"
        name="git_auth_mode"
        value={draft.git_auth_mode as string}
        options={AUTH_MODES}
        onChange={set('git_auth_mode')}
      />
      {input('forge_audience', 'Forge audience', 'Not secret: check it against the forge settings of the integration.')}
      <Checkbox
        label="Deploy pushes automatically"
        name="auto_deploy_enabled"
        checked={draft.auto_deploy_enabled as boolean}
        onChange={set('auto_deploy_enabled')}
      />
    </fieldset>
  );
}

export function PreviewFieldset({ draft, set, errors, readOnly }: FieldsetProps) {
  return (
    <fieldset disabled={readOnly}>
      <legend>Preview branch policy</legend>
      <Select
        label="Which pushed branches build a preview"
        name="preview_branch_mode"
        value={draft.preview_branch_mode as string}
        options={BRANCH_MODES}
        onChange={set('preview_branch_mode')}
      />
      <TextArea
        label="Include patterns (one per line)"
        name="preview_branch_include"
        rows={3}
        value={draft.preview_branch_include as string}
        error={errors.preview_branch_include}
        onInput={(e) => set('preview_branch_include')((e.target as HTMLTextAreaElement).value)}
      />
      <TextArea
        label="Exclude patterns (one per line)"
        name="preview_branch_exclude"
        rows={3}
        value={draft.preview_branch_exclude as string}
        error={errors.preview_branch_exclude}
        onInput={(e) => set('preview_branch_exclude')((e.target as HTMLTextAreaElement).value)}
      />
      <Checkbox
        label="Build previews of merge and pull requests"
        name="mr_previews_enabled"
        checked={draft.mr_previews_enabled as boolean}
        onChange={set('mr_previews_enabled')}
      />
    </fieldset>
  );
}

export function AnalyticsFieldset({ draft, set, readOnly }: FieldsetProps) {
  return (
    <fieldset disabled={readOnly}>
      <legend>Analytics</legend>
      <Checkbox
        label="Collect site analytics (switching off deletes the collected rows)"
        name="analytics_enabled"
        checked={draft.analytics_enabled as boolean}
        onChange={set('analytics_enabled')}
      />
    </fieldset>
  );
}
