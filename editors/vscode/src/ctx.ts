// The extension's state: the language client, its output channel and the
// status bar, and starting, stopping and restarting the server.

import * as vscode from "vscode";
import * as lc from "vscode-languageclient/node";

import { findServer, type FoundServer } from "./bootstrap";
import * as config from "./config";
import { fileStatus, hasFileStatus } from "./lsp_ext";
import * as python from "./python";
import { StatusBar } from "./status";

export class Ctx implements vscode.Disposable {
  readonly outputChannel: vscode.LogOutputChannel;
  private readonly status: StatusBar;
  private client: lc.LanguageClient | undefined;
  /** Serialises start, stop and restart, which the user can fire at will. */
  private lifecycle: Promise<void> = Promise.resolve();
  /** Bumped per `shapels/fileStatus` request, so a late answer cannot overwrite a newer one. */
  private statusSeq = 0;
  private readonly disposables: vscode.Disposable[] = [];
  /** Whether a change of Python environment already restarts the server. */
  private watchingPython = false;

  constructor(private readonly extension: vscode.ExtensionContext) {
    // The server's stderr (its `tracing` log) lands here too.
    this.outputChannel = vscode.window.createOutputChannel("shapels", { log: true });
    this.status = new StatusBar();
    this.disposables.push(
      this.outputChannel,
      this.status,
      vscode.window.onDidChangeActiveTextEditor(() => this.refreshFileStatus()),
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration("shapels.server.path")) {
          this.log("shapels.server.path changed; restarting the server");
          void this.restart();
        }
      }),
    );
  }

  start(): Promise<void> {
    return this.enqueue(() => this.doStart());
  }

  stop(): Promise<void> {
    return this.enqueue(() => this.doStop());
  }

  restart(): Promise<void> {
    return this.enqueue(async () => {
      await this.doStop();
      await this.doStart();
    });
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }

  log(message: string): void {
    this.outputChannel.info(message);
  }

  /** Asks the server about the active editor's document and shows the answer. */
  async refreshFileStatus(): Promise<void> {
    const seq = ++this.statusSeq;
    const client = this.client;
    const document = vscode.window.activeTextEditor?.document;
    if (
      client === undefined ||
      !client.isRunning() ||
      document === undefined ||
      document.languageId !== "python" ||
      !hasFileStatus(client.initializeResult)
    ) {
      this.status.setFile(undefined, undefined);
      return;
    }
    try {
      const result = await client.sendRequest(fileStatus, {
        textDocument: { uri: client.code2ProtocolConverter.asUri(document.uri) },
      });
      if (seq === this.statusSeq) this.status.setFile(document.uri, result);
    } catch (err) {
      // ContentModified: the document changed while the server was on it;
      // the publication for the newer version asks again. Anything else (a
      // restart, say) leaves the last answer up until the next one.
      if (!(err instanceof lc.ResponseError && err.code === lc.LSPErrorCodes.ContentModified)) {
        this.log(`shapels/fileStatus failed: ${String(err)}`);
      }
    }
  }

  private enqueue(task: () => Promise<void>): Promise<void> {
    const next = this.lifecycle.then(task, task);
    this.lifecycle = next.catch(() => undefined);
    return next;
  }

  private async doStart(): Promise<void> {
    if (this.client !== undefined) return;
    this.status.setState({ kind: "starting" });
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const log = (message: string) => this.log(message);
    let server: FoundServer;
    try {
      // Only when no path is set: the Python extension is not activated
      // for nothing.
      const configuredPath = config.serverPath();
      const pythonInterpreter = configuredPath?.trim() ? undefined : await python.activeInterpreter(folder, log);
      if (pythonInterpreter !== undefined) {
        this.log(`the Python extension's active interpreter: ${pythonInterpreter ?? "none"}`);
      }
      server = await findServer({
        configuredPath,
        workspaceFolder: folder?.fsPath,
        extensionPath: this.extension.extensionPath,
        envPath: process.env.PATH,
        pythonInterpreter,
        virtualEnv: process.env.VIRTUAL_ENV,
      });
      if (pythonInterpreter !== undefined) await this.watchPython();
    } catch (err) {
      this.status.setServer(undefined);
      this.fail(err);
      return;
    }
    this.status.setServer(server);
    this.log(`server: ${server.path} (from ${server.source})`);

    // No `transport`: with one, the client appends `--stdio` to the
    // arguments, which `shapels lsp` does not take (stdio is its only transport).
    const serverOptions: lc.ServerOptions = { command: server.path, args: ["lsp"] };
    const clientOptions: lc.LanguageClientOptions = {
      documentSelector: [
        { scheme: "file", language: "python" },
        { scheme: "untitled", language: "python" },
      ],
      outputChannel: this.outputChannel,
      middleware: {
        // Each publication is a new analysis: refresh the status bar when it
        // is about the document on screen.
        handleDiagnostics: (uri, diagnostics, next) => {
          next(uri, diagnostics);
          if (uri.toString() === vscode.window.activeTextEditor?.document.uri.toString()) {
            void this.refreshFileStatus();
          }
        },
      },
    };
    // The client id `shapels` makes `shapels.trace.server` its trace setting.
    const client = new lc.LanguageClient("shapels", "shapels", serverOptions, clientOptions);
    client.onDidChangeState((event) => {
      if (this.client !== client) return;
      switch (event.newState) {
        case lc.State.Starting:
          this.status.setState({ kind: "starting" });
          break;
        case lc.State.Running:
          this.status.setState({ kind: "running", version: client.initializeResult?.serverInfo?.version });
          void this.refreshFileStatus();
          break;
        case lc.State.Stopped:
          this.status.setState({ kind: "stopped" });
          break;
      }
    });
    this.client = client;
    try {
      await client.start();
    } catch (err) {
      this.client = undefined;
      await client.dispose().catch(() => undefined);
      this.fail(err);
      return;
    }
    this.status.setState({ kind: "running", version: client.initializeResult?.serverInfo?.version });
    void this.refreshFileStatus();
  }

  /** Restarts the server when the user selects another Python environment, which may hold another shapels. */
  private async watchPython(): Promise<void> {
    if (this.watchingPython) return;
    this.watchingPython = true;
    const subscription = await python.onDidChangeEnvironment(
      () => {
        if (config.serverPath()?.trim()) return;
        this.log("the active Python environment changed; restarting the server");
        void this.restart();
      },
      (message) => this.log(message),
    );
    if (subscription !== undefined) this.disposables.push(subscription);
  }

  private async doStop(): Promise<void> {
    const client = this.client;
    if (client === undefined) return;
    this.client = undefined;
    try {
      await client.stop(2000);
    } catch (err) {
      this.log(`stopping the server: ${String(err)}`);
    }
    await client.dispose().catch(() => undefined);
    this.status.setState({ kind: "stopped" });
  }

  private fail(err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    this.log(message);
    this.status.setState({ kind: "failed", message });
    void vscode.window.showErrorMessage(`shapels: ${message}`, "Open Settings", "Show Output").then((choice) => {
      if (choice === "Open Settings") {
        void vscode.commands.executeCommand("workbench.action.openSettings", "shapels.server.path");
      } else if (choice === "Show Output") {
        this.outputChannel.show(true);
      }
    });
  }
}
