// The commands in the palette (category "shapels").

import * as vscode from "vscode";

import * as config from "./config";
import type { Ctx } from "./ctx";

export function register(ctx: Ctx): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand("shapels.restartServer", async () => {
      ctx.log("restart requested");
      await ctx.restart();
    }),
    vscode.commands.registerCommand("shapels.showOutput", () => {
      ctx.outputChannel.show(true);
    }),
    vscode.commands.registerCommand("shapels.toggleInlayHints", async () => {
      const enabled = await config.toggleInlayHints();
      vscode.window.setStatusBarMessage(`shapels: inlay hints ${enabled ? "on" : "off"}`, 3000);
    }),
  ];
}
