/** Each production file that reaches local-cloud/, as its chain of imports (the file first, the emulator's file last). */
export function emulatorImports(root: string): string[][];
