import type { FRAMEWORKS } from '../projects/projects.ts';

/**
 * What `build_command` and `output_dir` mean when a project leaves them empty:
 * the framework's usual build (docs/builds.md has this table). `{pm}` stands
 * for the package manager the build detects (npm, pnpm, yarn, bun). A null
 * command builds nothing: the output folder is published as it is.
 */
export const FRAMEWORK_PRESETS: Record<(typeof FRAMEWORKS)[number], { buildCommand: string | null; outputDir: string }> = {
  // A static export (`output: 'export'` in next.config): the platform serves static files.
  nextjs: { buildCommand: '{pm} run build', outputDir: 'out' },
  // With @sveltejs/adapter-static.
  sveltekit: { buildCommand: '{pm} run build', outputDir: 'build' },
  astro: { buildCommand: '{pm} run build', outputDir: 'dist' },
  hugo: { buildCommand: 'hugo', outputDir: 'public' },
  vite: { buildCommand: '{pm} run build', outputDir: 'dist' },
  gatsby: { buildCommand: '{pm} run build', outputDir: 'public' },
  jekyll: { buildCommand: 'jekyll build', outputDir: '_site' },
  'static-html': { buildCommand: null, outputDir: '.' },
  other: { buildCommand: null, outputDir: '.' },
};

/** The command and folder a build uses: the project's own when set, else its framework's. */
export function buildSettings(project: { framework?: unknown; build_command?: unknown; output_dir?: unknown }): {
  buildCommand: string | null;
  outputDir: string;
} {
  const preset = FRAMEWORK_PRESETS[(project.framework as keyof typeof FRAMEWORK_PRESETS) ?? 'other'] ?? FRAMEWORK_PRESETS.other;
  const own = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : null);
  return { buildCommand: own(project.build_command) ?? preset.buildCommand, outputDir: own(project.output_dir) ?? preset.outputDir };
}
