import { useState } from 'preact/hooks';
import { BuildLog } from '../components/build-log.tsx';
import { DropZone } from '../components/drop-zone.tsx';
import { Link } from '../router.tsx';
import { api } from '../session.ts';
import { ErrorNote, formatBytes, formatTime, Loading, Notice, Page, shortId, useAction, useLoad } from '../ui.tsx';
import { AnalyticsTab } from './analytics.tsx';
import { DomainsTab } from './domains.tsx';
import { EnvTab } from './env.tsx';
import { FunctionsBetaNote, FunctionsTab, InvocationView } from './functions.tsx';
import type { Reply } from '../api.ts';
import type { Deployment, Project, ServingRulesSummary } from '../api-types.ts';
import { SettingsTab } from './settings.tsx';

const TABS: [string, string][] = [
  ['deployments', 'Deployments'],
  ['functions', 'Functions'],
  ['analytics', 'Analytics'],
  ['env', 'Environment variables'],
  ['domains', 'Domains'],
  ['settings', 'Settings'],
];

function DeploymentRow(props: { d: Deployment; projectId: string; onPromote: (id: string) => void; busy: boolean }) {
  const { d } = props;
  return (
    <tr>
      <td>
        <Link href={`/projects/${props.projectId}/deployments/${d.id}`}>{shortId(d.id)}</Link>
        {d.is_live && <strong class="badge"> live</strong>}
      </td>
      <td>{d.status}</td>
      <td>{d.trigger ?? 'upload'}</td>
      <td>{d.branch ?? '—'}</td>
      <td>{d.commit_sha ? `${d.commit_sha.slice(0, 7)} ${d.commit_message ?? ''}` : (d.label ?? '—')}</td>
      <td>{formatTime(d.created_at)}</td>
      <td>
        {!d.is_live && d.status === 'ready' && (
          <button type="button" class="small" disabled={props.busy} onClick={() => props.onPromote(d.id)}>
            Promote to production
          </button>
        )}
      </td>
    </tr>
  );
}

/** Deployments per page of the listing (newest first); "Show older" reads one page more. */
const DEPLOYMENTS_PAGE = 20;

/** The first `pages` pages of the deployments listing, read again whole on each reload (a promote moves `is_live`). */
async function loadDeployments(projectId: string, pages: number): Promise<{ deployments: Deployment[]; total: number }> {
  const deployments: Deployment[] = [];
  let total = 0;
  for (let page = 1; page <= pages; page++) {
    const path = `/projects/${projectId}/deployments?page=${page}&page_size=${DEPLOYMENTS_PAGE}`;
    const reply = await api.get<Reply<'/api/v1/projects/{id}/deployments', 'get'>>(path);
    deployments.push(...reply.deployments);
    total = reply.total;
    if (reply.deployments.length < DEPLOYMENTS_PAGE) break;
  }
  return { deployments, total };
}

function DeploymentsTab(props: { project: Project; reloadProject: () => void }) {
  const { project } = props;
  const [pages, setPages] = useState(1);
  const [deploys, setDeploys] = useState(0);
  const list = useLoad(() => loadDeployments(project.id, pages), [project.id, pages]);
  const action = useAction();
  const deployments = list.data?.deployments ?? [];
  const older = (list.data?.total ?? 0) - deployments.length;
  const liveIndex = deployments.findIndex((d) => d.is_live);
  // A preview (a branch's build) is never production's previous state.
  const previous = deployments.slice(liveIndex + 1).find((d) => d.status === 'ready' && d.target !== 'preview');
  const promote = (id: string) =>
    action.run(async () => {
      await api.post(`/projects/${project.id}/promote`, { deployment_id: id });
      await list.reload();
      props.reloadProject();
    });
  return (
    <>
      <DropZone
        label="Deploy a new version"
        target={() => ({ projectId: project.id })}
        onDeployed={() => {
          setDeploys(deploys + 1);
          void list.reload().then(props.reloadProject);
        }}
      />
      <FunctionsBetaNote projectId={project.id} version={deploys} />
      <section aria-labelledby="deployments-title">
        <h2 id="deployments-title">Deployments</h2>
        {liveIndex >= 0 && previous && (
          <button type="button" disabled={action.busy} onClick={() => promote(previous.id)}>
            Roll back to {shortId(previous.id)}
          </button>
        )}
        <ErrorNote error={action.error ?? list.error} />
        {list.loading && !list.data && <Loading what="deployments" />}
        {deployments.length > 0 && (
          <table>
            <caption class="visually-hidden">Deployments, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Deployment</th>
                <th scope="col">Status</th>
                <th scope="col">Trigger</th>
                <th scope="col">Branch</th>
                <th scope="col">Commit or label</th>
                <th scope="col">Created</th>
                <th scope="col">Action</th>
              </tr>
            </thead>
            <tbody>
              {deployments.map((d) => (
                <DeploymentRow key={d.id} d={d} projectId={project.id} onPromote={promote} busy={action.busy} />
              ))}
            </tbody>
          </table>
        )}
        {older > 0 && (
          <button type="button" disabled={list.loading} onClick={() => setPages(pages + 1)}>
            Show older ({older} more)
          </button>
        )}
      </section>
    </>
  );
}

function DeploymentDetail(props: { projectId: string; id: string }) {
  const d = useLoad(
    () =>
      api.get<Reply<'/api/v1/projects/{id}/deployments/{deployment_id}', 'get'>>(`/projects/${props.projectId}/deployments/${props.id}`),
    [props.id],
  );
  if (d.error) return <ErrorNote error={d.error} />;
  if (!d.data) return <Loading what="the deployment" />;
  return (
    <section aria-labelledby="deployment-title">
      <h2 id="deployment-title">Deployment {shortId(d.data.id)}</h2>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          {d.data.status}
          {d.data.is_live ? ' (live)' : ''}
        </dd>
        <dt>Files</dt>
        <dd>
          {d.data.file_count} ({formatBytes(d.data.total_bytes)})
        </dd>
        <dt>Functions</dt>
        <dd>{d.data.functions.join(', ') || 'none'}</dd>
        {d.data.preview_url && (
          <>
            <dt>Preview</dt>
            <dd>
              <a href={d.data.preview_url}>{d.data.preview_url}</a>
            </dd>
          </>
        )}
      </dl>
      {d.data.serving_rules && <ServingRulesFacts rules={d.data.serving_rules} />}
      <BuildLog projectId={props.projectId} deploymentId={d.data.id} status={d.data.status} initial={d.data.build_log} />
    </section>
  );
}

/** What publishing compiled of the deployment's `_redirects` and `_headers`, and each line it skipped. */
function ServingRulesFacts(props: { rules: ServingRulesSummary }) {
  const { redirects, headers, skipped } = props.rules;
  const total = props.rules.skipped_count ?? skipped.length;
  return (
    <section aria-labelledby="serving-rules-title">
      <h3 id="serving-rules-title">Serving rules</h3>
      <p>
        {redirects} {redirects === 1 ? 'rule' : 'rules'} from _redirects, {headers} {headers === 1 ? 'path' : 'paths'} from _headers
        {total > 0 ? `; ${total} ${total === 1 ? 'line' : 'lines'} skipped` : ''}.
      </p>
      {skipped.length > 0 && (
        <table>
          <caption>Skipped lines</caption>
          <thead>
            <tr>
              <th scope="col">File</th>
              <th scope="col">Line</th>
              <th scope="col">Why</th>
            </tr>
          </thead>
          <tbody>
            {skipped.map((s) => (
              <tr key={`${s.file}:${s.line}`}>
                <td>{s.file}</td>
                <td>{s.line}</td>
                <td>{s.reason}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {total > skipped.length && <p>The first {skipped.length} skipped lines are listed.</p>}
    </section>
  );
}

export function ProjectPage(props: { id: string; tab: string; item: string | null }) {
  const project = useLoad(() => api.get<Project>(`/projects/${props.id}`), [props.id]);
  if (project.error && !project.data)
    return (
      <Page title="Project">
        <ErrorNote error={project.error} />
      </Page>
    );
  if (!project.data) return <Loading what="the project" />;
  const p = project.data;
  const tab = props.tab;
  return (
    <Page title={p.name}>
      <p>
        Production: <a href={p.production_url}>{p.production_url}</a> · live deployment {shortId(p.live_deployment_id)}
      </p>
      {p.status === 'deleting' && <Notice>This project is being deleted.</Notice>}
      <nav aria-label="Project" class="tabs">
        {TABS.map(([key, text]) => (
          <Link key={key} href={`/projects/${p.id}/${key}`} current={tab === key}>
            {text}
          </Link>
        ))}
      </nav>
      {tab === 'deployments' && props.item === null && <DeploymentsTab project={p} reloadProject={project.reload} />}
      {tab === 'deployments' && props.item && <DeploymentDetail projectId={p.id} id={props.item} />}
      {tab === 'functions' && props.item === null && <FunctionsTab project={p} />}
      {tab === 'functions' && props.item && <InvocationView project={p} item={props.item} />}
      {tab === 'analytics' && <AnalyticsTab project={p} />}
      {tab === 'env' && <EnvTab project={p} />}
      {tab === 'domains' && <DomainsTab project={p} />}
      {tab === 'settings' && <SettingsTab project={p} onSaved={project.reload} />}
    </Page>
  );
}
