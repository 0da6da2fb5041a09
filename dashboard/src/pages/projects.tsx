import { useState } from 'preact/hooks';
import { DropZone } from '../components/drop-zone.tsx';
import { Link, navigate } from '../router.tsx';
import { api, useSession } from '../session.ts';
import { ErrorNote, Field, formatTime, Loading, Page, shortId, useLoad } from '../ui.tsx';

export interface Project {
  id: string;
  name: string;
  subdomain: string;
  production_url: string;
  live_deployment_id: string | null;
  status: string;
  created_at: string;
  [field: string]: unknown;
}

export interface Deployment {
  id: string;
  status: string;
  created_at: string;
  ready_at: string | null;
  is_live: boolean;
  label: string | null;
  file_count: number;
  total_bytes: number;
  // Builds (issue 23) add these; shown when present.
  trigger?: string | null;
  branch?: string | null;
  commit_sha?: string | null;
  commit_message?: string | null;
  preview_url?: string | null;
  /** A build's target; an upload's is null. */
  target?: 'production' | 'preview' | null;
}

function ProjectCard(props: { project: Project }) {
  const { project } = props;
  const extra = useLoad(async () => {
    const [deployments, screenshot] = await Promise.all([
      api.get<{ deployments: Deployment[] }>(`/projects/${project.id}/deployments?page_size=1`),
      api.get<{ screenshot: { image_url: string } | null }>(`/projects/${project.id}/screenshot`),
    ]);
    return { last: deployments.deployments[0] ?? null, screenshot: screenshot.screenshot };
  }, [project.id]);
  return (
    <li class="card">
      {extra.data?.screenshot ? (
        <img src={extra.data.screenshot.image_url} alt={`Screenshot of ${project.name}`} width={320} height={200} loading="lazy" />
      ) : (
        <div class="no-shot" aria-hidden="true" />
      )}
      <h2>
        <Link href={`/projects/${project.id}`}>{project.name}</Link>
      </h2>
      <p>
        <a href={project.production_url}>{project.production_url}</a>
      </p>
      <dl class="facts">
        <dt>Live deployment</dt>
        <dd>{shortId(project.live_deployment_id)}</dd>
        <dt>Last deployment</dt>
        <dd>
          {extra.data?.last ? `${extra.data.last.status}, ${formatTime(extra.data.last.created_at)}` : extra.loading ? '…' : 'none yet'}
        </dd>
      </dl>
      <ErrorNote error={extra.error} />
    </li>
  );
}

export function ProjectsPage() {
  const session = useSession();
  const projects = useLoad(() => api.get<{ projects: Project[] }>('/projects?limit=100'), [session.team?.id]);
  return (
    <Page
      title="Projects"
      actions={
        <Link href="/new" class="button-like">
          New project
        </Link>
      }
    >
      <ErrorNote error={projects.error} />
      {projects.loading && !projects.data && <Loading what="projects" />}
      {projects.data && projects.data.projects.length === 0 && <p>No projects yet. Create one by dropping a folder.</p>}
      <ul class="cards">
        {projects.data?.projects.map((p) => (
          <ProjectCard key={p.id} project={p} />
        ))}
      </ul>
    </Page>
  );
}

export function NewProjectPage() {
  const [name, setName] = useState('');
  const [subdomain, setSubdomain] = useState('');
  const [nameError, setNameError] = useState<string | undefined>();
  return (
    <Page title="New project">
      <p>Name the project, then drop its folder. The files are hashed here and only those the platform lacks are sent.</p>
      <Field
        label="Project name"
        name="project.name"
        value={name}
        required
        error={nameError}
        onInput={(e) => setName((e.target as HTMLInputElement).value)}
      />
      <Field
        label="Subdomain (optional)"
        name="project.subdomain"
        value={subdomain}
        hint="The first label of the site's address; derived from the name when empty."
        onInput={(e) => setSubdomain((e.target as HTMLInputElement).value)}
      />
      <DropZone
        label="The site's folder"
        target={() => {
          if (!name.trim()) {
            setNameError('Give the project a name first.');
            return null;
          }
          setNameError(undefined);
          return { newProject: { name: name.trim(), ...(subdomain.trim() ? { subdomain: subdomain.trim() } : {}) } };
        }}
        onDeployed={(result) => navigate(`/projects/${result.project_id}`)}
      />
    </Page>
  );
}
