// The extension's entry point: tensor shapes from the shapels language server
// as inlay hints, hovers and diagnostics in Python files.

import type * as vscode from "vscode";

import * as commands from "./commands";
import { Ctx } from "./ctx";

let ctx: Ctx | undefined;

export async function activate(extension: vscode.ExtensionContext): Promise<void> {
  ctx = new Ctx(extension);
  extension.subscriptions.push(ctx, ...commands.register(ctx));
  // A server that cannot start is reported in the status bar and a message;
  // the commands stay usable (to fix the setting and restart).
  await ctx.start();
}

export async function deactivate(): Promise<void> {
  await ctx?.stop();
  ctx = undefined;
}
