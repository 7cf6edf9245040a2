/**
 * The packed test's side of the workspace: which packages there are (every packages/* directory, so a new one is
 * packed as soon as it exists), packing them with pnpm, and running npm in an app outside the workspace.
 */
import { type ChildProcess, execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** One workspace package, as its package.json names it. */
export interface WorkspacePackage {
  /** The directory under packages/. */
  readonly dir: string;
  readonly name: string;
  readonly version: string;
}

/** What a finished command printed, and its exit code. */
export interface CommandResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Processes started by this test and still running. */
const running = new Set<ChildProcess>();

/** Counts `child` as running until it exits, so that {@link stopRunning} can end it. */
export function track(child: ChildProcess): ChildProcess {
  running.add(child);
  child.on('exit', () => running.delete(child));
  return child;
}

/** Ends every process still running (a test that timed out leaves its tsc or server behind). */
export function stopRunning(): void {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
}

/** Every package under `root`/packages. */
export function workspacePackages(root: string): WorkspacePackage[] {
  return readdirSync(join(root, 'packages'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => {
      const manifest = JSON.parse(readFileSync(join(root, 'packages', entry.name, 'package.json'), 'utf8'));
      return { dir: entry.name, name: manifest.name, version: manifest.version };
    });
}

/** The tarball name npm and pnpm give a package: `@sluice/core` 0.1.0 is `sluice-core-0.1.0.tgz`. */
export function tarballName(pkg: WorkspacePackage): string {
  return `${pkg.name.replace(/^@/, '').replace('/', '-')}-${pkg.version}.tgz`;
}

/**
 * The environment for npm in the app: without the `npm_*` variables of the pnpm (or npx) run around the test,
 * which would point npm at the workspace (`npm_config_local_prefix`), keeping the ones that say how to reach the
 * registry.
 */
export function appEnv(): NodeJS.ProcessEnv {
  const keep = /^npm_config_(registry|cache|userconfig|cafile|proxy|https_proxy|noproxy|strict_ssl)$/i;
  return Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name) || keep.test(name)),
  );
}

/** Runs a command to its end; never rejects (the exit code says how it went). */
export function run(
  command: string,
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv = appEnv(),
): Promise<CommandResult> {
  return new Promise((resolve) => {
    const child = execFile(
      command,
      args,
      { cwd, env, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolve({
          code,
          stdout,
          stderr: error !== null && code === -1 ? `${error.message}\n${stderr}` : stderr,
        });
      },
    );
    track(child);
  });
}

/** Throws with the command's output unless it exited 0. */
export function ok(what: string, result: CommandResult): CommandResult {
  if (result.code !== 0) {
    throw new Error(`${what} exited ${result.code}\n${result.stdout}\n${result.stderr}`);
  }
  return result;
}

/**
 * Packs `packages` into `dest` with the workspace's pnpm (the version `packageManager` names): pnpm writes real
 * versions for `workspace:` ranges, and runs each package's `prepack`, which builds it unless dist is fresh.
 */
export async function pack(root: string, packages: readonly WorkspacePackage[], dest: string): Promise<void> {
  const manager = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).packageManager as string;
  const filters = packages.flatMap((pkg) => ['--filter', `./packages/${pkg.dir}`]);
  const args = ['--yes', manager, '-r', ...filters, 'pack', '--pack-destination', dest];
  ok('pnpm pack', await run('npx', args, root, process.env));
}

/**
 * `npm install` in `app`: the Sluice tarballs from disk, third-party packages from npm's cache when it has them
 * (`--prefer-offline`), from the registry otherwise (the first run on a fresh machine).
 */
export async function npmInstall(app: string): Promise<void> {
  const args = ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'];
  ok('npm install', await run('npm', args, app));
}
