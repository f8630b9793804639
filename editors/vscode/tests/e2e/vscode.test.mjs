// End-to-end test of the extension in a real VS Code: code-server (VS Code
// in a browser) with the packaged platform-specific .vsix installed, driven
// by headless Chromium through playwright-core. Nothing says where shapels
// is and there is none on PATH, so the extension runs the binary bundled in
// the .vsix, as a user's fresh install does. It opens a workspace whose
// model.py holds a seeded `matmul-shape` bug and checks what a user would
// see: inlay hints with the right text, a hover with the shape, the bug in
// the Problems panel, the status bar, and the three commands; the restart
// then finds the shapels a `.venv` in the workspace holds.
//
// Everything it needs comes from the environment (scripts/vscode-test sets
// it, after installing what is missing):
//
//   SHAPELS_BIN          the shapels binary of this build (target/debug/shapels),
//                        for the workspace's .venv
//   SHAPELS_VSIX         the packaged extension, with a server bundled
//   SHAPELS_CODE_SERVER  code-server's entry point (…/code-server/out/node/entry.js)
//   SHAPELS_NODE24       the Node 24 that runs code-server
//   SHAPELS_CHROMIUM     the browser (default /usr/bin/chromium)
//   SHAPELS_ARTIFACTS    where screenshots and logs go (default tests/artifacts)
//   SHAPELS_UPDATE_DOCS_SCREENSHOT=1  also write docs/vscode.png and the
//                        before/after pictures of the hint settings
//                        (docs/vscode-hints-before.png, -after.png)
//
// Every wait is bounded, so a broken setup fails with a screenshot and the
// logs in the artifacts folder instead of hanging; code-server and Chromium
// are stopped whatever happens.

import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import { chromium } from "playwright-core";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "../../../..");

/** One wait for something VS Code shows; a run takes ~30 s in all. */
const STEP_TIMEOUT = 45_000;
/** Starting code-server or Chromium, or installing the extension. */
const START_TIMEOUT = 90_000;

function required(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set; run the suite through scripts/vscode-test`);
  if (!fs.existsSync(value)) throw new Error(`${name}=${value} does not exist`);
  return value;
}

const config = {
  bin: required("SHAPELS_BIN"),
  vsix: required("SHAPELS_VSIX"),
  codeServer: required("SHAPELS_CODE_SERVER"),
  node24: required("SHAPELS_NODE24"),
  chromium: process.env.SHAPELS_CHROMIUM || "/usr/bin/chromium",
  artifacts: process.env.SHAPELS_ARTIFACTS || path.join(REPO, "tests/artifacts"),
};

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "shapels-vscode-"));
const dirs = {
  userData: path.join(tmp, "user-data"),
  extensions: path.join(tmp, "extensions"),
  workspace: path.join(tmp, "workspace"),
  browserProfile: path.join(tmp, "chromium-profile"),
  xdg: path.join(tmp, "xdg"),
};
const codeServerLog = [];
const browserLog = [];
let codeServer;
let context;
let page;

// --- processes ---------------------------------------------------------------

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** PATH without the directories that hold a `shapels`, so that only the bundled one can be found. */
function pathWithoutShapels() {
  return (process.env.PATH ?? "")
    .split(path.delimiter)
    .filter((dir) => dir !== "" && !fs.existsSync(path.join(dir, "shapels")))
    .join(path.delimiter);
}

function codeServerEnv() {
  const env = { ...process.env };
  // An activated virtual environment would be the extension's first guess.
  delete env.VIRTUAL_ENV;
  return {
    ...env,
    // Keep code-server's own config and state out of the home directory.
    XDG_CONFIG_HOME: path.join(dirs.xdg, "config"),
    XDG_DATA_HOME: path.join(dirs.xdg, "data"),
    XDG_CACHE_HOME: path.join(dirs.xdg, "cache"),
    // Run the extension host with the Node 24 that runs code-server.
    PATH: `${path.dirname(config.node24)}${path.delimiter}${pathWithoutShapels()}`,
  };
}

const commonArgs = () => [
  config.codeServer,
  "--user-data-dir",
  dirs.userData,
  "--extensions-dir",
  dirs.extensions,
  "--config",
  path.join(tmp, "code-server.yaml"),
];

async function installExtension() {
  const { stdout, stderr } = await promisify(execFile)(
    config.node24,
    [...commonArgs(), "--install-extension", config.vsix],
    { env: codeServerEnv(), timeout: START_TIMEOUT, killSignal: "SIGKILL" },
  );
  const output = stdout + stderr;
  codeServerLog.push("--- --install-extension ---", output);
  assert.match(output, /successfully installed/i, `installing ${config.vsix} failed:\n${output}`);
}

async function startCodeServer() {
  const port = await freePort();
  const args = [
    ...commonArgs(),
    "--bind-addr",
    `127.0.0.1:${port}`,
    "--auth",
    "none",
    "--disable-telemetry",
    "--disable-update-check",
    "--disable-workspace-trust",
    "--disable-getting-started-override",
    dirs.workspace,
  ];
  // A process group of its own, so stopping it also stops the extension
  // host and the shapels server it started.
  codeServer = spawn(config.node24, args, {
    env: codeServerEnv(),
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  codeServerLog.push("--- code-server ---");
  for (const stream of [codeServer.stdout, codeServer.stderr]) {
    stream.setEncoding("utf8");
    stream.on("data", (chunk) => codeServerLog.push(chunk.trimEnd()));
  }
  const exited = new Promise((_, reject) =>
    codeServer.once("exit", (code, signal) =>
      reject(new Error(`code-server exited early (code ${code}, signal ${signal})`)),
    ),
  );
  exited.catch(() => undefined);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + START_TIMEOUT;
  while (Date.now() < deadline) {
    const healthy = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) })
      .then((r) => r.ok)
      .catch(() => false);
    if (healthy) return url;
    await Promise.race([exited, sleep(250)]);
  }
  throw new Error(`code-server did not answer on ${url}/healthz within ${START_TIMEOUT / 1000} s`);
}

/** Kills code-server's whole group at once; for exits that cannot wait. */
function killCodeServerNow() {
  if (!codeServer || codeServer.exitCode !== null || codeServer.signalCode !== null) return;
  try {
    process.kill(-codeServer.pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

// code-server runs in a process group of its own, which a timeout killing
// this one would leave behind: take it down on every way out.
process.on("exit", killCodeServerNow);
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.once(signal, () => {
    killCodeServerNow();
    process.exit(1);
  });
}

async function stopCodeServer() {
  if (!codeServer || codeServer.exitCode !== null || codeServer.signalCode !== null) return;
  const exited = new Promise((resolve) => codeServer.once("exit", resolve));
  const signalGroup = (signal) => {
    try {
      process.kill(-codeServer.pid, signal);
    } catch {
      // Already gone.
    }
  };
  signalGroup("SIGTERM");
  if ((await Promise.race([exited.then(() => true), sleep(5000).then(() => false)])) === false) {
    signalGroup("SIGKILL");
    await Promise.race([exited, sleep(5000)]);
  }
}

/** The executables of the running `shapels` processes (Linux: from /proc). */
function runningServers() {
  const found = [];
  for (const pid of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const exe = fs.readlinkSync(`/proc/${pid}/exe`);
      if (path.basename(exe) === "shapels") found.push(exe);
    } catch {
      // Gone, or not ours to read.
    }
  }
  return found;
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Resolves with `promise`, or rejects after `ms` saying what hung. */
function bounded(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms / 1000} s`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

// --- the workbench -------------------------------------------------------------

/** Text as VS Code renders it, with its non-breaking spaces made plain. */
const plain = (text) => (text ?? "").replace(/\u00a0/g, " ");

/** The rendered lines of the active editor, inlay hints included. */
async function editorLines() {
  const lines = await page.locator(".editor-instance .monaco-editor .view-lines .view-line").evaluateAll((nodes) =>
    nodes
      .map((node) => ({ top: parseFloat(node.style.top) || 0, text: node.textContent }))
      .sort((a, b) => a.top - b.top)
      .map((line) => line.text),
  );
  return lines.map(plain);
}

/** Polls `read` until `check` holds of what it returns; fails with the last value. */
async function waitFor(what, read, check, timeout = STEP_TIMEOUT) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    last = await read().catch((err) => `<${err.message}>`);
    if (check(last)) return last;
    if (Date.now() > deadline) {
      assert.fail(`timed out after ${timeout / 1000} s waiting for ${what}; last seen:\n${JSON.stringify(last, null, 2)}`);
    }
    await sleep(250);
  }
}

async function runCommand(title) {
  await page.keyboard.press("Control+Shift+P");
  const input = page.locator(".quick-input-widget input.input");
  await input.waitFor({ state: "visible", timeout: STEP_TIMEOUT });
  await input.fill(`>${title}`);
  const row = page.locator(".quick-input-widget .monaco-list-row", { hasText: title }).first();
  await row.waitFor({ state: "visible", timeout: STEP_TIMEOUT });
  await input.press("Enter");
  await page.locator(".quick-input-widget").waitFor({ state: "hidden", timeout: STEP_TIMEOUT });
}

async function statusText() {
  const item = page.locator(".statusbar-item", { hasText: "shapels" }).first();
  return plain(await item.textContent({ timeout: 2000 }));
}

async function screenshot(name) {
  fs.mkdirSync(config.artifacts, { recursive: true });
  const file = path.join(config.artifacts, name);
  await page.screenshot({ path: file, timeout: 15_000 });
  return file;
}

/** Writes the workspace's .vscode/settings.json, which VS Code watches. */
function setWorkspaceSettings(settings) {
  fs.mkdirSync(path.join(dirs.workspace, ".vscode"), { recursive: true });
  fs.writeFileSync(path.join(dirs.workspace, ".vscode/settings.json"), JSON.stringify(settings, null, 2));
}

async function openFile(name, marker) {
  await page.keyboard.press("Control+P");
  const input = page.locator(".quick-input-widget input.input");
  await input.waitFor({ state: "visible" });
  await input.fill(name);
  await page.locator(".quick-input-widget .monaco-list-row", { hasText: name }).first().waitFor();
  await input.press("Enter");
  await waitFor(`${name} in the editor`, editorLines, (lines) => lines.some((line) => line.includes(marker)));
}

/** Moves the cursor to `line:column` (1-based) with Go to Line. */
async function goTo(line, column) {
  await page.keyboard.press("Control+G");
  const input = page.locator(".quick-input-widget input.input");
  await input.waitFor({ state: "visible" });
  await input.fill(`:${line}:${column}`);
  await input.press("Enter");
  await page.locator(".quick-input-widget").waitFor({ state: "hidden" });
}

/** The text of the Problems panel. */
async function problems() {
  return plain(await page.locator(".markers-panel").textContent({ timeout: 2000 }));
}

// --- the test --------------------------------------------------------------------

before(async () => {
  fs.mkdirSync(path.join(dirs.userData, "User"), { recursive: true });
  fs.mkdirSync(dirs.extensions, { recursive: true });
  fs.cpSync(path.join(HERE, "workspace"), dirs.workspace, { recursive: true });
  // A real model for the hint settings' before and after.
  fs.copyFileSync(path.join(REPO, "tests/corpus/nanogpt.py"), path.join(dirs.workspace, "nanogpt.py"));
  // Three bugs with quick fixes.
  fs.writeFileSync(
    path.join(dirs.workspace, "fixes.py"),
    [
      "import torch",
      "import torch.nn as nn",
      "import torch.nn.functional as F",
      "",
      "lin = nn.Linear(64, 8)",
      "lin(torch.randn(2, 32))",
      "a = torch.randn(4, 8, 16)",
      "a.transpose(1, 2).view(4, 128)",
      "logits = torch.randn(4, 16, 100)",
      "targets = torch.randint(0, 100, (4, 16))",
      "F.cross_entropy(logits, targets)",
      "",
    ].join("\n"),
  );
  // No `shapels.server.path`: the extension must find the bundled binary on
  // its own. The rest keeps VS Code's first-run screens and network calls
  // out of the way.
  const settings = {
    "editor.inlayHints.enabled": "on",
    "editor.minimap.enabled": false,
    "editor.hover.delay": 200,
    // No fade-ins: the screenshot shows the hover fully drawn.
    "workbench.reduceMotion": "on",
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": false,
    "workbench.welcomePage.walkthroughs.openOnInstall": false,
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "workbench.enableExperiments": false,
    "security.workspace.trust.enabled": false,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "extensions.autoCheckUpdates": false,
    "extensions.autoUpdate": false,
    "extensions.ignoreRecommendations": true,
    "chat.disableAIFeatures": true,
    "git.enabled": false,
  };
  fs.writeFileSync(path.join(dirs.userData, "User/settings.json"), JSON.stringify(settings, null, 2));

  await installExtension();
  const url = await startCodeServer();

  context = await chromium.launchPersistentContext(dirs.browserProfile, {
    executablePath: config.chromium,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    viewport: { width: 1280, height: 800 },
    timeout: START_TIMEOUT,
  });
  context.setDefaultTimeout(STEP_TIMEOUT);
  page = context.pages()[0] ?? (await context.newPage());
  page.on("console", (msg) => {
    if (msg.type() === "error" || msg.type() === "warning") browserLog.push(`[${msg.type()}] ${msg.text()}`);
  });
  page.on("pageerror", (err) => browserLog.push(`[pageerror] ${err.message}`));
  await page.goto(`${url}/?folder=${encodeURIComponent(dirs.workspace)}`, { timeout: START_TIMEOUT });
  await page.locator(".monaco-workbench").waitFor({ state: "visible", timeout: START_TIMEOUT });
});

after(async () => {
  fs.mkdirSync(config.artifacts, { recursive: true });
  fs.writeFileSync(path.join(config.artifacts, "vscode-code-server.log"), codeServerLog.join("\n") + "\n");
  fs.writeFileSync(path.join(config.artifacts, "vscode-browser.log"), browserLog.join("\n") + "\n");
  if (context) await bounded(context.close(), 15_000, "closing Chromium").catch((err) => console.error(err.message));
  await stopCodeServer();
  fs.rmSync(tmp, { recursive: true, force: true, maxRetries: 3 });
});

// Each step is a test of its own, run in order; after a failure the rest
// fail at once rather than each waiting out its timeouts on a broken page.
let failed;

function step(name, fn) {
  test(name, { timeout: 120_000 }, async () => {
    if (failed) throw new Error(`not run: "${failed}" failed`);
    try {
      await fn();
    } catch (err) {
      failed = name;
      if (page) await screenshot("vscode-failure.png").catch(() => undefined);
      throw err;
    }
  });
}

step("model.py opens in an editor", async () => {
  await page.keyboard.press("Control+P");
  const input = page.locator(".quick-input-widget input.input");
  await input.waitFor({ state: "visible" });
  await input.fill("model.py");
  await page.locator(".quick-input-widget .monaco-list-row", { hasText: "model.py" }).first().waitFor();
  await input.press("Enter");
  await waitFor("model.py in the editor", editorLines, (lines) =>
    lines.some((line) => line.includes("torch.randn(8, 128)")),
  );
});

step("inlay hints show the shapes after the names", async () => {
  const lines = await waitFor("the inlay hints", editorLines, (lines) =>
    lines.some((line) => line.startsWith("x: [8, 128] = torch.randn(8, 128)")),
  );
  assert.ok(lines.includes("logits: [8, 10] = model(x)"), lines.join("\n"));
  assert.ok(lines.includes("w: [32, 10] = torch.randn(32, 10)"), lines.join("\n"));
  assert.ok(
    lines.some((line) => line.trim().startsWith("h: [8, 64] = torch.relu(self.proj(x))")),
    lines.join("\n"),
  );
});

step("the status bar counts the tensor whose shape is unknown", async () => {
  // `features = torch.load(...)` has an unknown shape; the others are known.
  await waitFor("shapels in the status bar", statusText, (text) => text.includes("shapels: 1 unknown"));
});

step("shapels: Show Output shows the server's log", async () => {
  // The command is idempotent. One CI run saw the palette take it and close
  // while no panel ever opened (the window still settling after start-up),
  // so a panel that has not appeared in 15 s gets the command again, at
  // most three times in all.
  const output = page.locator(".part.panel .output-view, .part.panel .monaco-editor").first();
  for (let attempt = 1; ; attempt++) {
    await runCommand("shapels: Show Output");
    const shown = await output
      .waitFor({ state: "visible", timeout: 15_000 })
      .then(() => true)
      .catch(() => false);
    if (shown || attempt === 3) break;
  }
  await waitFor(
    "the shapels output channel",
    async () => plain(await output.textContent({ timeout: 2000 })),
    (text) => text.includes("(from bundled)"),
  );
  // The process itself: the binary unpacked from the .vsix, nothing else.
  await waitFor("the bundled server process", async () => runningServers(), (exes) =>
    exes.some((exe) => exe.startsWith(dirs.extensions + path.sep) && exe.endsWith(path.join("server", "shapels"))),
  );
});

step("the seeded matmul-shape bug is in the Problems panel", async () => {
  await page.keyboard.press("Control+Shift+M");
  const panel = page.locator(".markers-panel");
  await panel.waitFor({ state: "visible" });
  const text = await waitFor(
    "the matmul-shape problem",
    async () => plain(await panel.textContent({ timeout: 2000 })),
    (text) => text.includes("mat1 and mat2 shapes cannot be multiplied (8x10 and 32x10)"),
  );
  assert.match(text, /matmul-shape/);
  assert.match(text, /shapels/);
  assert.match(text, /\[Ln 20, Col 10\]/);
});

step("shapels: Toggle Inlay Hints turns the hints off and on", async () => {
  await runCommand("shapels: Toggle Inlay Hints");
  await waitFor("the hints to go", editorLines, (lines) =>
    lines.includes("x = torch.randn(8, 128)") && !lines.some((line) => line.includes(": [")),
  );
  await runCommand("shapels: Toggle Inlay Hints");
  await waitFor("the hints to come back", editorLines, (lines) =>
    lines.includes("x: [8, 128] = torch.randn(8, 128)"),
  );
});

step("shapels: Restart Server brings the server back, from the workspace's .venv", async () => {
  // `pip install shapels` into the project's environment: a .venv in the
  // workspace comes before the bundled binary. This one notes that it ran.
  const ran = path.join(tmp, "venv-shapels-ran");
  const venvBin = path.join(dirs.workspace, ".venv", "bin");
  fs.mkdirSync(venvBin, { recursive: true });
  fs.writeFileSync(path.join(venvBin, "shapels"), `#!/bin/sh\necho "$@" >>'${ran}'\nexec '${config.bin}' "$@"\n`, {
    mode: 0o755,
  });
  await runCommand("shapels: Restart Server");
  await waitFor(
    "the .venv's shapels to be started as the server",
    async () => (fs.existsSync(ran) ? fs.readFileSync(ran, "utf8") : ""),
    (text) => typeof text === "string" && text.split("\n").includes("lsp"),
  );
  await waitFor(
    "the bundled server to stop",
    async () => runningServers().filter((exe) => exe.startsWith(dirs.extensions + path.sep)),
    (bundled) => Array.isArray(bundled) && bundled.length === 0,
  );
  await waitFor("the restarted server in the status bar", statusText, (text) =>
    text.includes("shapels: 1 unknown"),
  );
  await waitFor("the hints after the restart", editorLines, (lines) =>
    lines.includes("x: [8, 128] = torch.randn(8, 128)"),
  );
});

step("hovering a tensor's name shows its shape", async () => {
  // Back to the Problems panel, and the toggle's status bar message gone,
  // for the screenshot.
  await runCommand("View: Focus Problems");
  await waitFor(
    "the status bar message of the toggle to go",
    async () => plain(await page.locator(".part.statusbar").textContent({ timeout: 2000 })),
    (text) => !text.includes("inlay hints on"),
  );
  // The box of the `x` that starts `x = torch.randn(8, 128)`, left of its hint.
  const box = await page.evaluate(() => {
    for (const line of document.querySelectorAll(".editor-instance .monaco-editor .view-line")) {
      if (!line.textContent.replace(/\u00a0/g, " ").startsWith("x: [8, 128] = torch")) continue;
      const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
      const first = walker.nextNode();
      const range = document.createRange();
      range.setStart(first, 0);
      range.setEnd(first, 1);
      const { x, y, width, height } = range.getBoundingClientRect();
      return { x, y, width, height };
    }
    return null;
  });
  assert.ok(box, "the line `x = torch.randn(8, 128)` is on screen");
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  const hover = page.locator(".monaco-hover:not(.hidden)", { hasText: "Tensor[8, 128]" }).first();
  await hover.waitFor({ state: "visible" });
  await waitFor(
    "the hover to be fully drawn",
    () => hover.evaluate((node) => getComputedStyle(node).opacity),
    (opacity) => opacity === "1",
  );
  const text = plain(await hover.textContent());
  assert.match(text, /x: Tensor\[8, 128\]/);
  assert.match(text, /float32/);

  const file = await screenshot("vscode.png");
  if (process.env.SHAPELS_UPDATE_DOCS_SCREENSHOT === "1") {
    fs.copyFileSync(file, path.join(REPO, "docs/vscode.png"));
  }
});

step("quick fixes make the squiggles go", async () => {
  await openFile("fixes.py", "lin = nn.Linear(64, 8)");
  await runCommand("View: Focus Problems");
  await waitFor("the three problems of fixes.py", problems, (text) =>
    ["linear-shape", "view-stride", "loss-shape"].every((code) => text.includes(code)),
  );
  const squiggles = () => page.locator(".editor-instance .monaco-editor .squiggly-error").count();
  await waitFor("three squiggles", squiggles, (n) => n === 3);
  // Each diagnostic starts its line: the cursor there asks for its fixes,
  // and Auto Fix applies the preferred one, as Shift+Alt+. does.
  for (const [line, code, fixed] of [
    [6, "linear-shape", "lin = nn.Linear(32, 8)"],
    [8, "view-stride", "a.transpose(1, 2).reshape(4, 128)"],
    [11, "loss-shape", "F.cross_entropy(logits.view(-1, 100), targets.view(-1))"],
  ]) {
    await goTo(line, 1);
    // The first Auto Fix after the cursor moved sometimes applies nothing
    // (seen in about half the runs, on one line or another; the server's
    // answer is the same each time, see server/cli/tests/code_actions.rs):
    // a user presses it again, and so does this test, a few times at most.
    for (let attempt = 1; ; attempt++) {
      await runCommand("Auto Fix...");
      try {
        await waitFor(`the fix of ${code} in the text`, editorLines, (lines) => lines.some((l) => l.includes(fixed)), 8000);
        break;
      } catch (err) {
        await screenshot(`vscode-auto-fix-${code}-${attempt}.png`);
        if (attempt === 4) throw err;
      }
    }
    await waitFor(`${code} to leave the Problems panel`, problems, (text) => !text.includes(code));
  }
  await waitFor("no squiggle left in fixes.py", squiggles, (n) => n === 0);
  await screenshot("vscode-quick-fixes.png");
  await runCommand("File: Revert File");
});

step("the hint settings keep a real model's hints readable", async () => {
  await openFile("nanogpt.py", "import math");
  // The attention's forward in view: repeated names and 4-d shapes.
  await runCommand("View: Hide Panel");
  await goTo(54, 1);
  const before = await waitFor("the hints of the attention", editorLines, (lines) =>
    lines.some((line) => line.trim().startsWith("att: [B, 4, T, T] = F.softmax(att, dim=-1)")),
  );
  assert.ok(
    before.some((line) => line.trim().startsWith("x: [B, T, 256] = self.gelu(x)")),
    before.join("\n"),
  );
  const beforeShot = await screenshot("vscode-hints-before.png");

  setWorkspaceSettings({ "shapels.inlayHints.hideRepeats": true, "shapels.inlayHints.maxLength": 12 });
  const after = await waitFor("the repeated hints to go", editorLines, (lines) =>
    lines.some((line) => line.trim() === "att = F.softmax(att, dim=-1)"),
  );
  // A name bound to the shape it had loses its hint; a changed one keeps
  // it, abbreviated to 12 characters.
  assert.ok(after.some((line) => line.trim() === "x = self.gelu(x)"), after.join("\n"));
  assert.ok(after.some((line) => line.trim().startsWith("x: [B, T, …] = self.c_fc(x)")), after.join("\n"));
  assert.ok(after.some((line) => line.trim().startsWith("y: [B, …, 16] = att @ v")), after.join("\n"));
  const afterShot = await screenshot("vscode-hints-after.png");
  if (process.env.SHAPELS_UPDATE_DOCS_SCREENSHOT === "1") {
    fs.copyFileSync(beforeShot, path.join(REPO, "docs/vscode-hints-before.png"));
    fs.copyFileSync(afterShot, path.join(REPO, "docs/vscode-hints-after.png"));
  }
});
