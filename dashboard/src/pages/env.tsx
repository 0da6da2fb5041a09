import { useState } from 'preact/hooks';
import { api } from '../session.ts';
import { ErrorNote, formatTime, Notice, Select, TextArea, useAction, useLoad } from '../ui.tsx';
import type { Reply } from '../api.ts';
import type { EnvImport, Project } from '../api-types.ts';

const ENVIRONMENTS = ['production', 'preview', 'development'] as const;

/** Environment variables: names only; values go in and are never shown back. */
export function EnvTab(props: { project: Project }) {
  const [environment, setEnvironment] = useState<string>('production');
  const [content, setContent] = useState('');
  const [result, setResult] = useState<EnvImport | null>(null);
  const list = useLoad(
    () => api.get<Reply<'/api/v1/projects/{id}/env', 'get'>>(`/projects/${props.project.id}/env?environment=${environment}`),
    [props.project.id, environment],
  );
  const action = useAction();
  return (
    <section aria-labelledby="env-title">
      <h2 id="env-title">Environment variables</h2>
      <p>They reach builds only. Values are stored encrypted and are never shown again.</p>
      <Select label="Environment" name="environment" value={environment} options={ENVIRONMENTS} onChange={setEnvironment} />
      <ErrorNote error={list.error} />
      {list.data && (
        <table>
          <caption>Variables of {environment}</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Targets</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {list.data.variables.length === 0 && (
              <tr>
                <td colSpan={3}>None yet.</td>
              </tr>
            )}
            {list.data.variables.map((v) => (
              <tr key={v.name}>
                <td>
                  <code>{v.name}</code>
                </td>
                <td>{v.targets.join(', ')}</td>
                <td>{formatTime(v.updated_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const done = await action.run(() => api.post<EnvImport>(`/projects/${props.project.id}/env/bulk`, { content, environment }));
          if (done) {
            setResult(done);
            setContent('');
            await list.reload();
          }
        }}
      >
        <h3>Import .env text</h3>
        <TextArea
          label="Contents of a .env file"
          name="content"
          rows={6}
          value={content}
          error={action.fields.content}
          hint="One NAME=value per line; comments and blank lines are skipped."
          onInput={(e) => setContent((e.target as HTMLTextAreaElement).value)}
        />
        <ErrorNote error={action.error} />
        <button type="submit" disabled={action.busy || !content.trim()}>
          {action.busy ? 'Importing…' : `Import into ${environment}`}
        </button>
      </form>
      {result && (
        <Notice>
          Imported into {result.environment}: {result.created.length} created ({result.created.join(', ') || 'none'}),{' '}
          {result.updated.length} updated ({result.updated.join(', ') || 'none'}).
          {result.rejected.length > 0 &&
            ` ${result.rejected.length} skipped. ${result.rejected.map((r) => `${r.name ?? `line ${r.line}`}: ${r.message}`).join(' ')}`}
        </Notice>
      )}
    </section>
  );
}
