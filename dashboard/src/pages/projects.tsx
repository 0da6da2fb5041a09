import { useState } from 'preact/hooks';
import { DropZone } from '../components/drop-zone.tsx';
import { Link, navigate } from '../router.tsx';
import type { Reply } from '../api.ts';
import type { Project } from '../api-types.ts';
import { api, useSession } from '../session.ts';
import { ErrorNote, Field, formatTime, Loading, Page, shortId, useLoad } from '../ui.tsx';

function ProjectCard(props: { project: Project }) {
  const { project } = props;
  const extra = useLoad(async () => {
    const [deployments, screenshot] = await Promise.all([
      api.get<Reply<'/api/v1/projects/{id}/deployments', 'get'>>(`/projects/${project.id}/deployments?page_size=1`),
      api.get<Reply<'/api/v1/projects/{id}/screenshot', 'get'>>(`/projects/${project.id}/screenshot`),
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
  const projects = useLoad(() => api.get<Reply<'/api/v1/projects', 'get'>>('/projects?limit=100'), [session.team?.id]);
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
