/**
 * The layers of lib/ and which code may import which (docs/architecture.md, "Layers"). Checked by
 * `npm run check:layers` (bin/check-layers.mjs), part of `npm run checks` and so of `npm test`: it fails on a
 * forbidden import below, and on a circle between lib/ folders (which dependency-cruiser's own rules do not
 * see: its `circular` is between files).
 *
 * Four levels, each importing only itself and those below it:
 *   kernel    errors, config, logging, AWS clients, keys and queries, access rule and role types, schema helper, open JSON
 *   entities  the record modules: `records.ts`, `*-records.ts`, `*-record.ts` in an area's folder
 *   use cases the rest of an area's folder: publishing, lifecycle cascades, per-area rules
 *   adapters  http/, cli/, local/, workers.ts, the function hosts (functions/hosts/), handlers/, infra/
 * Entities and use cases share their area's folder, so within one area a record module may use its area's
 * pure helpers (a slug pattern, a type); across areas it may not reach a use case.
 */

/** Paths are as dependency-cruiser reports them: relative to the repository, with `/`. */
const KERNEL = [
  '^lib/(aws|errors|db|access)/',
  '^lib/(config|local-config|logger|schema|json|envelope|trace|plans|resources|periodic-flush|queue-batch)\\.ts$',
];
const ADAPTERS = [
  '^lib/(http|cli|local)/',
  '^lib/workers\\.ts$',
  // The hosts that run what domain code asks for: functions (local sandbox, Fargate and Lambda) and builds.
  '^lib/functions/hosts/',
  '^lib/builds/(cloud-host|build-egress)\\.ts$',
  '^handlers/',
  '^infra/',
];
/** The local platform (an adapter of its own): never part of what is deployed. */
const LOCAL = ['^lib/local/', '^lib/functions/hosts/local/', '^lib/local-config\\.ts$'];
/** Sits with the local function host but also runs in the cloud build image (lib/builds/build-egress.ts). */
const SHARED_WITH_CLOUD = ['^lib/sandbox/egress-proxy\\.ts$'];
/**
 * The AWS emulator of the synthesized mode: a package of its own beside lib/ (README, "The AWS emulator").
 */
const EMULATOR = ['^local-cloud/'];
const ENTITY_FILE = '/[a-z-]*records?\\.ts$';
/** Tests, benchmarks and build scripts may import anything. */
const TOOLING = ['^test/', '^bench/', '^bin/', '^dashboard/'];

const LIB = '^lib/';

module.exports = {
  forbidden: [
    {
      // A circle between files anywhere in the code (it was madge's check:imports): a module that two others need
      // each before the other loads half-initialized.
      name: 'no-file-circle',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'kernel-imports-kernel',
      comment: 'The kernel is the bottom level: it imports only the kernel (and packages).',
      severity: 'error',
      from: { path: KERNEL },
      to: { path: LIB, pathNot: KERNEL },
    },
    {
      name: 'entities-below-other-areas-use-cases',
      comment:
        "A record module imports the kernel, other record modules and its own area's helpers, never another area's use case or an adapter.",
      severity: 'error',
      from: { path: `^lib/([^/]+)${ENTITY_FILE}`, pathNot: [...KERNEL, ...ADAPTERS] },
      // A stored shape another area defines (a deployment's serving rules summary) is named, not run.
      to: { path: LIB, pathNot: [...KERNEL, ENTITY_FILE, '^lib/$1/'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'domain-not-adapters',
      comment: 'Entities and use cases never import an adapter (http, cli, local, workers, the function hosts).',
      severity: 'error',
      from: { path: LIB, pathNot: [...KERNEL, ...ADAPTERS] },
      to: { path: ADAPTERS },
    },
    {
      name: 'lib-not-handlers-or-infra',
      comment: 'handlers/ and infra/ import lib/, never the other way round.',
      severity: 'error',
      from: { path: LIB, pathNot: LOCAL },
      to: { path: ['^handlers/', '^infra/'] },
    },
    {
      name: 'production-not-local',
      comment:
        'What is deployed (lib/ outside the local platform and the CLI, handlers/) never imports the local platform. ' +
        'infra/ runs where the stack is synthesized and may (a file lock); the emulator rule below still holds for it.',
      severity: 'error',
      from: { path: [LIB, '^handlers/'], pathNot: [...LOCAL, '^lib/cli/'] },
      to: { path: LOCAL, pathNot: SHARED_WITH_CLOUD },
    },
    {
      name: 'only-local-imports-emulator',
      comment: 'The AWS emulator is reached only by the local platform (and tests): never by production code or the CLI.',
      severity: 'error',
      from: { pathNot: [...EMULATOR, ...LOCAL, ...TOOLING] },
      to: { path: EMULATOR },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports tie folders together as much as any: the circle that issue 34 broke was mostly types.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.mjs', '.js', '.json'] },
  },
};
