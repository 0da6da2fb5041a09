/** Builds the console into dashboard/dist; the paths of its script and style sheet. */
export function buildDashboard(options?: { quiet?: boolean }): Promise<{ js: string; css: string }>;
