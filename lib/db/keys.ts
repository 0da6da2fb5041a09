/** Single-table key shapes, in one place. */
export const keys = {
  user: (userId: string) => ({ pk: `USER#${userId}`, sk: 'USER' }),
  userEmail: (email: string) => ({ pk: `EMAIL#${email.toLowerCase()}`, sk: 'EMAIL' }),
  team: (teamId: string) => ({ pk: `TEAM#${teamId}`, sk: 'TEAM' }),
  teamSlug: (slug: string) => ({ pk: `TEAMSLUG#${slug}`, sk: 'TEAMSLUG' }),
  membership: (teamId: string, userId: string) => ({ pk: `TEAM#${teamId}`, sk: `MEMBER#${userId}` }),
  membershipByUser: (userId: string, teamId: string) => ({ gsi1pk: `USER#${userId}`, gsi1sk: `TEAM#${teamId}` }),
  token: (tokenHash: string) => ({ pk: `TOKEN#${tokenHash}`, sk: 'TOKEN' }),
  // Integrations: a project's environment variables, one item per environment and name
  envVariable: (projectId: string, environment: string, name: string) => ({ pk: `PROJECT#${projectId}`, sk: `ENV#${environment}#${name}` }),
  envVariablePrefix: (projectId: string, environment?: string) => ({ pk: `PROJECT#${projectId}`, skPrefix: environment ? `ENV#${environment}#` : 'ENV#' }),
};

export const epochSeconds = (date: Date) => Math.floor(date.getTime() / 1000);
