// Types of what the TypeScript side imports from build.mjs (plain JavaScript, run by every build host).
export declare function detectPackageManager(
  rootDir: string,
  setting: string | null,
): { name: 'npm' | 'pnpm' | 'yarn' | 'bun'; why: string };
export declare function lockfileOf(rootDir: string, manager: string): string | null;
export declare function fileHash(path: string): string;
export declare function buildPhase(
  job: object,
): Promise<{ outcome: string; phase: string; failure_line: string | null; failure_kind: 'user' | 'platform' | null }>;
export declare function fetchPhase(job: object): Promise<void>;
export declare function spokenDuration(ms: number): string;
export declare function installFailureLine(input: {
  command: string;
  args: string[];
  lockfile: string | null;
  code: number;
  tail: string[];
  trouble: { target: string; why: string | null }[];
}): string;
/** The build's root directory, checked (no link on the way, package.json and lockfiles regular files); throws a step failure. */
export declare function checkRepository(sourceDir: string, rootDirectory: string | null): string;
