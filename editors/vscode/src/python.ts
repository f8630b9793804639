// The active Python environment, from the Python extension (ms-python.python)
// when it is installed: the server is looked up beside that environment's
// interpreter, where `pip install shapels` puts it.
//
// Only the few members of the extension's API used here are typed, rather
// than adding a dependency for them; the API is the stable `environments`
// one that `@vscode/python-extension` describes.

import * as vscode from "vscode";

const PYTHON_EXTENSION = "ms-python.python";

/** How long activating the Python extension may take before it is passed over. */
const ACTIVATION_TIMEOUT_MS = 15_000;

interface EnvironmentPath {
  id: string;
  path: string;
}

interface ResolvedEnvironment {
  executable: { uri: vscode.Uri | undefined };
}

interface PythonExtensionApi {
  environments: {
    getActiveEnvironmentPath(resource?: vscode.Uri): EnvironmentPath;
    resolveEnvironment(environment: EnvironmentPath | string): Promise<ResolvedEnvironment | undefined>;
    onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
  };
}

async function api(log: (message: string) => void): Promise<PythonExtensionApi | undefined> {
  const extension = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION);
  if (extension === undefined) return undefined;
  try {
    const exports = extension.isActive
      ? extension.exports
      : await Promise.race([
          extension.activate(),
          new Promise<never>((_, reject) =>
            setTimeout(() => reject(new Error("it did not activate in time")), ACTIVATION_TIMEOUT_MS),
          ),
        ]);
    return exports?.environments ? exports : undefined;
  } catch (err) {
    log(`the Python extension is installed but cannot be used (${String(err)}); looking for VIRTUAL_ENV and .venv instead`);
    return undefined;
  }
}

/**
 * The active interpreter for `resource`: `undefined` when the Python
 * extension is not there (or fails), `null` when it has none selected.
 */
export async function activeInterpreter(
  resource: vscode.Uri | undefined,
  log: (message: string) => void,
): Promise<string | null | undefined> {
  const python = await api(log);
  if (python === undefined) return undefined;
  try {
    const active = python.environments.getActiveEnvironmentPath(resource);
    const resolved = await python.environments.resolveEnvironment(active);
    return resolved?.executable.uri?.fsPath ?? null;
  } catch (err) {
    log(`the Python extension could not say which environment is active (${String(err)})`);
    return null;
  }
}

/** Calls `listener` when the user selects another Python environment. */
export async function onDidChangeEnvironment(
  listener: () => void,
  log: (message: string) => void,
): Promise<vscode.Disposable | undefined> {
  const python = await api(log);
  return python?.environments.onDidChangeActiveEnvironmentPath(() => listener());
}
