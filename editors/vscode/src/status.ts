// The status bar item: the server's state and, for the Python file in the
// active editor, how many of its tensors have shapes shapels could not work
// out (from the `shapels/fileStatus` request).

import * as path from "node:path";
import * as vscode from "vscode";

import type { FoundServer } from "./bootstrap";
import type { FileStatus } from "./lsp_ext";

export type ServerState =
  | { kind: "starting" }
  | { kind: "running"; version: string | undefined }
  | { kind: "stopped" }
  | { kind: "failed"; message: string };

interface FileView {
  uri: vscode.Uri;
  status: FileStatus;
}

const MAX_LISTED = 8;

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private state: ServerState = { kind: "stopped" };
  private server: FoundServer | undefined;
  private file: FileView | undefined;

  constructor() {
    this.item = vscode.window.createStatusBarItem("shapels.status", vscode.StatusBarAlignment.Left, 10);
    this.item.name = "shapels";
    this.item.command = "shapels.showOutput";
    this.render();
    this.item.show();
  }

  setState(state: ServerState): void {
    this.state = state;
    if (state.kind !== "running") this.file = undefined;
    this.render();
  }

  /** The binary in use, or `undefined` when none was found. */
  setServer(server: FoundServer | undefined): void {
    this.server = server;
    this.render();
  }

  /** The status of the active editor's document; `undefined` for none. */
  setFile(uri: vscode.Uri | undefined, status: FileStatus | null | undefined): void {
    this.file = uri !== undefined && status ? { uri, status } : undefined;
    this.render();
  }

  dispose(): void {
    this.item.dispose();
  }

  private render(): void {
    const item = this.item;
    item.backgroundColor = undefined;
    switch (this.state.kind) {
      case "starting":
        item.text = "$(loading~spin) shapels";
        break;
      case "stopped":
        item.text = "$(circle-slash) shapels";
        item.backgroundColor = new vscode.ThemeColor("statusBarItem.warningBackground");
        break;
      case "failed":
        item.text = "$(error) shapels";
        item.backgroundColor = new vscode.ThemeColor("statusBarItem.errorBackground");
        break;
      case "running": {
        const status = this.file?.status;
        if (status === undefined) {
          item.text = "$(check) shapels";
        } else if (!status.analyzed) {
          item.text = "$(warning) shapels: analysis failed";
        } else if (status.unknownShapes > 0) {
          item.text = `$(question) shapels: ${status.unknownShapes} unknown`;
        } else {
          item.text = "$(check) shapels";
        }
        break;
      }
    }
    item.tooltip = this.tooltip();
  }

  private tooltip(): vscode.MarkdownString {
    const md = new vscode.MarkdownString("", true);
    md.isTrusted = { enabledCommands: ["shapels.restartServer", "shapels.showOutput", "shapels.toggleInlayHints"] };
    const state = this.state;
    switch (state.kind) {
      case "starting":
        md.appendMarkdown("**shapels** is starting\n\n");
        break;
      case "stopped":
        md.appendMarkdown("**shapels** is stopped\n\n");
        break;
      case "failed":
        md.appendMarkdown("**shapels** could not start\n\n");
        md.appendText(state.message);
        md.appendMarkdown("\n\n");
        break;
      case "running":
        md.appendMarkdown(`**shapels** ${state.version ?? ""} is running\n\n`);
        break;
    }
    if (this.server !== undefined) {
      md.appendMarkdown("Server: ");
      md.appendText(`${this.server.path} (from ${this.server.source})`);
      md.appendMarkdown("\n\n");
    }
    if (this.file !== undefined) {
      const { uri, status } = this.file;
      const name = path.basename(uri.path);
      if (!status.analyzed) {
        md.appendMarkdown(`The analysis of \`${name}\` failed; see the output.\n\n`);
      } else {
        const tensors = plural(status.tensors, "tensor");
        if (status.unknownShapes === 0) {
          md.appendMarkdown(`\`${name}\`: ${tensors}, every shape known\n\n`);
        } else {
          md.appendMarkdown(`\`${name}\`: ${tensors}, ${status.unknownShapes} with an unknown shape:\n\n`);
          for (const unknown of status.unknown.slice(0, MAX_LISTED)) {
            md.appendMarkdown(`- \`${unknown.name.replace(/`/g, "")}\` line ${unknown.range.start.line + 1}\n`);
          }
          if (status.unknownShapes > MAX_LISTED) md.appendMarkdown(`- …\n`);
          md.appendMarkdown("\n");
        }
        md.appendMarkdown(`${plural(status.errors, "error")}, ${plural(status.warnings, "warning")}\n\n`);
      }
    }
    md.appendMarkdown(
      "[$(debug-restart) Restart](command:shapels.restartServer) · " +
        "[$(output) Output](command:shapels.showOutput) · " +
        "[$(eye) Toggle hints](command:shapels.toggleInlayHints)",
    );
    return md;
  }
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
