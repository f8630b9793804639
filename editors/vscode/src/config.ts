// The extension's view of the `shapels.*` settings. The server reads its own
// keys through `workspace/configuration`; this module only reads what the
// client itself needs and flips the hints switch.

import * as vscode from "vscode";

export const SECTION = "shapels";

function section(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration(SECTION);
}

/** `shapels.server.path`, unset as `null`. */
export function serverPath(): string | null {
  return section().get<string | null>("server.path", null) ?? null;
}

export function inlayHintsEnabled(): boolean {
  return section().get<boolean>("inlayHints.enable", true);
}

/**
 * Flips `shapels.inlayHints.enable` where it is set: in the workspace when it
 * has a value there, otherwise in the user settings. The server hears of the
 * change through `workspace/didChangeConfiguration` and asks VS Code to
 * refresh its hints.
 */
export async function toggleInlayHints(): Promise<boolean> {
  const cfg = section();
  const enabled = !cfg.get<boolean>("inlayHints.enable", true);
  const inspected = cfg.inspect<boolean>("inlayHints.enable");
  const target =
    inspected?.workspaceValue !== undefined
      ? vscode.ConfigurationTarget.Workspace
      : vscode.ConfigurationTarget.Global;
  await cfg.update("inlayHints.enable", enabled, target);
  return enabled;
}
