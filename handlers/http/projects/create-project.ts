import { loadSecrets } from '../../../lib/aws/secrets.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { createProject, createProjectSchema } from '../../../lib/project-setup/create.ts';

// A git_access_token is sealed with the environment variables' key.
await loadSecrets(['envEncryption']);

export const handler = defineHandler('POST /api/v1/projects', { body: createProjectSchema }, async (ctx) => {
  const team = ctx.team!;
  const project = await createProject({
    team: team.team,
    body: ctx.body,
    caller: { kind: ctx.principal!.kind, client: ctx.headers['x-platform-client'] },
  });
  return { status: 201, data: project };
});
