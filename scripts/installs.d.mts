// Types of scripts/installs.mjs, for the tests that import it.
export const ROOT: string;
export const SIDE_INSTALLS: Record<string, { installedBy: string }>;
export type InstallState = 'current' | 'missing' | 'stale';
export function installState(dir: string): InstallState;
export function ensureInstalled(dir: string, options?: { log?: (line: string) => void }): InstallState;
