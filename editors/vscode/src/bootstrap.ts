// Finding the `shapels` binary, in this order:
//
// 1. the `shapels.server.path` setting;
// 2. the active Python environment's `shapels` (where `pip install shapels`
//    puts it): the interpreter the Python extension has selected when that
//    extension is installed, else the environment of `VIRTUAL_ENV`, else a
//    `.venv` or `venv` in the workspace folder;
// 3. `shapels` on PATH;
// 4. the binary bundled in a platform-specific .vsix (`server/shapels`).
//
// Plain Node, no `vscode` import, so the unit tests run it without an editor.

import * as fs from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";

export type ServerSource = "setting" | "Python environment" | "PATH" | "bundled";

export interface FoundServer {
  path: string;
  source: ServerSource;
}

export interface DiscoveryInput {
  /** `shapels.server.path`, as the user wrote it (null or "" when unset). */
  configuredPath: string | null | undefined;
  /** The first workspace folder, for `${workspaceFolder}` and relative paths. */
  workspaceFolder: string | undefined;
  /** The extension's own directory. */
  extensionPath: string;
  /** The environment's PATH. */
  envPath: string | undefined;
  /**
   * What the Python extension says of the active environment: `undefined`
   * when that extension is not installed (the fallbacks then apply), `null`
   * when it is but has no interpreter selected, else the interpreter's path.
   */
  pythonInterpreter?: string | null;
  /** The `VIRTUAL_ENV` of the environment VS Code runs in. */
  virtualEnv?: string;
  platform?: NodeJS.Platform;
  homedir?: string;
}

/** Why no binary could be used, with what was tried, for the user to read. */
export class ServerNotFound extends Error {}

export function binaryName(platform: NodeJS.Platform = process.platform): string {
  return platform === "win32" ? "shapels.exe" : "shapels";
}

/** The bundled binary's path inside the extension. */
export function bundledPath(extensionPath: string, platform: NodeJS.Platform = process.platform): string {
  return path.join(extensionPath, "server", binaryName(platform));
}

/**
 * Expands `~` and `${workspaceFolder}` and makes a relative path absolute
 * against the workspace folder (or the home directory when there is none).
 */
export function expandPath(raw: string, workspaceFolder: string | undefined, homedir: string): string {
  let p = raw.trim();
  if (p === "~" || p.startsWith("~/") || p.startsWith("~\\")) {
    p = path.join(homedir, p.slice(1));
  }
  if (p.includes("${workspaceFolder}")) {
    if (workspaceFolder === undefined) {
      throw new ServerNotFound(`shapels.server.path uses \${workspaceFolder}, but no folder is open: ${raw}`);
    }
    p = p.split("${workspaceFolder}").join(workspaceFolder);
  }
  if (!path.isAbsolute(p)) {
    p = path.resolve(workspaceFolder ?? homedir, p);
  }
  return p;
}

async function isExecutableFile(p: string, platform: NodeJS.Platform): Promise<boolean> {
  try {
    const stat = await fs.stat(p);
    if (!stat.isFile()) return false;
    if (platform !== "win32") await fs.access(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first `shapels` on PATH, as a shell would find it. */
export async function searchPath(
  envPath: string | undefined,
  platform: NodeJS.Platform = process.platform,
): Promise<string | undefined> {
  const name = binaryName(platform);
  const separator = platform === "win32" ? ";" : ":";
  for (const dir of (envPath ?? "").split(separator)) {
    if (dir === "") continue;
    const candidate = path.join(dir, name);
    if (await isExecutableFile(candidate, platform)) return candidate;
  }
  return undefined;
}

/**
 * Where `pip install shapels` puts the binary in the environment whose
 * interpreter is `interpreter`: beside it (`.venv/bin/python`), or in
 * `Scripts` beside it on Windows (`C:\Python312\python.exe`).
 */
function besideInterpreter(interpreter: string, platform: NodeJS.Platform): string[] {
  const dir = path.dirname(interpreter);
  const name = binaryName(platform);
  return platform === "win32" ? [path.join(dir, name), path.join(dir, "Scripts", name)] : [path.join(dir, name)];
}

/** The binary in the scripts directory of the environment `env`. */
function inEnvironment(env: string, platform: NodeJS.Platform): string {
  return path.join(env, platform === "win32" ? "Scripts" : "bin", binaryName(platform));
}

/**
 * The candidates of the active Python environment, in order: the Python
 * extension's interpreter when that extension is there; otherwise the
 * activated environment (`VIRTUAL_ENV`), then the workspace's `.venv` and
 * `venv`, the names uv, Poetry and `python -m venv` use.
 */
export function pythonEnvironmentCandidates(input: DiscoveryInput): string[] {
  const platform = input.platform ?? process.platform;
  if (input.pythonInterpreter !== undefined) {
    return input.pythonInterpreter ? besideInterpreter(input.pythonInterpreter, platform) : [];
  }
  const candidates: string[] = [];
  if (input.virtualEnv) candidates.push(inEnvironment(input.virtualEnv, platform));
  if (input.workspaceFolder !== undefined) {
    for (const name of [".venv", "venv"]) {
      candidates.push(inEnvironment(path.join(input.workspaceFolder, name), platform));
    }
  }
  return candidates;
}

/**
 * The server binary to run. A configured path that does not exist is an
 * error rather than a reason to fall back: the user asked for that binary.
 */
export async function findServer(input: DiscoveryInput): Promise<FoundServer> {
  const platform = input.platform ?? process.platform;
  const homedir = input.homedir ?? os.homedir();

  const configured = input.configuredPath?.trim();
  if (configured) {
    const p = expandPath(configured, input.workspaceFolder, homedir);
    if (await isExecutableFile(p, platform)) return { path: p, source: "setting" };
    throw new ServerNotFound(
      `shapels.server.path is set to ${JSON.stringify(configured)}, but ${p} is not an executable file.`,
    );
  }

  const inPython = pythonEnvironmentCandidates(input);
  for (const candidate of inPython) {
    if (await isExecutableFile(candidate, platform)) return { path: candidate, source: "Python environment" };
  }

  const onPath = await searchPath(input.envPath, platform);
  if (onPath !== undefined) return { path: onPath, source: "PATH" };

  const bundled = bundledPath(input.extensionPath, platform);
  if (await fileExists(bundled)) {
    // A .vsix is a zip; make sure the unpacked binary kept its execute bit.
    if (platform !== "win32" && !(await isExecutableFile(bundled, platform))) {
      await fs.chmod(bundled, 0o755).catch(() => undefined);
    }
    if (await isExecutableFile(bundled, platform)) return { path: bundled, source: "bundled" };
  }

  const looked = inPython.length > 0 ? ` (${inPython.join(", ")})` : " (none is active)";
  throw new ServerNotFound(
    `Cannot find the shapels server: shapels.server.path is not set, the Python environment has no ` +
      `${binaryName(platform)}${looked}, there is none on PATH, and this build of the extension bundles ` +
      `none (${bundled}). Install it into the project's environment with \`pip install shapels\` ` +
      "(or `uv tool install shapels`), install the extension built for your platform, or set shapels.server.path.",
  );
}

async function fileExists(p: string): Promise<boolean> {
  try {
    return (await fs.stat(p)).isFile();
  } catch {
    return false;
  }
}
