// Binary discovery: the setting, the Python environment, PATH, the bundled binary.

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";

import { bundledPath, expandPath, findServer, pythonEnvironmentCandidates, ServerNotFound } from "../../src/bootstrap";

let root: string;

function executable(p: string, mode = 0o755): string {
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, "#!/bin/sh\n");
  fs.chmodSync(p, mode);
  return p;
}

before(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "shapels-bootstrap-"));
});

after(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

describe("findServer", { skip: process.platform === "win32" }, () => {
  test("the setting wins over PATH and the bundled binary", async () => {
    const configured = executable(path.join(root, "a/custom/shapels"));
    const onPath = executable(path.join(root, "a/bin/shapels"));
    const extension = path.join(root, "a/ext");
    executable(bundledPath(extension));
    const found = await findServer({
      configuredPath: configured,
      workspaceFolder: undefined,
      extensionPath: extension,
      envPath: path.dirname(onPath),
    });
    assert.deepEqual(found, { path: configured, source: "setting" });
  });

  test("a configured path that does not exist is an error, not a fallback", async () => {
    const onPath = executable(path.join(root, "b/bin/shapels"));
    await assert.rejects(
      findServer({
        configuredPath: path.join(root, "b/missing/shapels"),
        workspaceFolder: undefined,
        extensionPath: path.join(root, "b/ext"),
        envPath: path.dirname(onPath),
      }),
      (err: unknown) => err instanceof ServerNotFound && /not an executable file/.test(err.message),
    );
  });

  test("PATH is searched in order, skipping non-executables, before the bundled binary", async () => {
    const notExecutable = executable(path.join(root, "c/first/shapels"), 0o644);
    const second = executable(path.join(root, "c/second/shapels"));
    const extension = path.join(root, "c/ext");
    executable(bundledPath(extension));
    const found = await findServer({
      configuredPath: null,
      workspaceFolder: undefined,
      extensionPath: extension,
      envPath: ["", path.dirname(notExecutable), path.join(root, "c/none"), path.dirname(second)].join(":"),
    });
    assert.deepEqual(found, { path: second, source: "PATH" });
  });

  test("the bundled binary when nothing else is there, its execute bit restored", async () => {
    const extension = path.join(root, "d/ext");
    const bundled = executable(bundledPath(extension), 0o644);
    const found = await findServer({
      configuredPath: "  ",
      workspaceFolder: undefined,
      extensionPath: extension,
      envPath: path.join(root, "d/empty"),
    });
    assert.deepEqual(found, { path: bundled, source: "bundled" });
    assert.ok(fs.statSync(bundled).mode & 0o100, "the bundled binary is executable");
  });

  test("the Python extension's interpreter: its environment's shapels comes before PATH", async () => {
    const env = path.join(root, "g/envs/project");
    const inEnv = executable(path.join(env, "bin/shapels"));
    const onPath = executable(path.join(root, "g/bin/shapels"));
    const workspace = path.join(root, "g/ws");
    // Ignored: the Python extension's choice replaces the fallbacks.
    executable(path.join(workspace, ".venv/bin/shapels"));
    const extension = path.join(root, "g/ext");
    executable(bundledPath(extension));
    const found = await findServer({
      configuredPath: null,
      workspaceFolder: workspace,
      extensionPath: extension,
      envPath: path.dirname(onPath),
      pythonInterpreter: path.join(env, "bin/python"),
    });
    assert.deepEqual(found, { path: inEnv, source: "Python environment" });
  });

  test("an interpreter without shapels falls through to PATH, not to the workspace's .venv", async () => {
    const workspace = path.join(root, "h/ws");
    executable(path.join(workspace, ".venv/bin/shapels"));
    const onPath = executable(path.join(root, "h/bin/shapels"));
    const found = await findServer({
      configuredPath: null,
      workspaceFolder: workspace,
      extensionPath: path.join(root, "h/ext"),
      envPath: path.dirname(onPath),
      pythonInterpreter: "/usr/bin/python3-without-shapels/python",
    });
    assert.deepEqual(found, { path: onPath, source: "PATH" });
  });

  test("without the Python extension: VIRTUAL_ENV, then .venv, then venv, all before PATH", async () => {
    const workspace = path.join(root, "i/ws");
    const venv = executable(path.join(workspace, "venv/bin/shapels"));
    const dotVenv = executable(path.join(workspace, ".venv/bin/shapels"));
    const activated = executable(path.join(root, "i/activated/bin/shapels"));
    const onPath = executable(path.join(root, "i/bin/shapels"));
    const input = {
      configuredPath: null,
      workspaceFolder: workspace,
      extensionPath: path.join(root, "i/ext"),
      envPath: path.dirname(onPath),
      virtualEnv: path.join(root, "i/activated"),
    };
    assert.deepEqual(await findServer(input), { path: activated, source: "Python environment" });
    fs.rmSync(activated);
    assert.deepEqual(await findServer(input), { path: dotVenv, source: "Python environment" });
    fs.rmSync(dotVenv);
    assert.deepEqual(await findServer(input), { path: venv, source: "Python environment" });
    fs.rmSync(venv);
    assert.deepEqual(await findServer(input), { path: onPath, source: "PATH" });
  });

  test("the setting wins over the Python environment", async () => {
    const configured = executable(path.join(root, "j/custom/shapels"));
    const workspace = path.join(root, "j/ws");
    executable(path.join(workspace, ".venv/bin/shapels"));
    const found = await findServer({
      configuredPath: configured,
      workspaceFolder: workspace,
      extensionPath: path.join(root, "j/ext"),
      envPath: "",
      pythonInterpreter: path.join(workspace, ".venv/bin/python"),
    });
    assert.deepEqual(found, { path: configured, source: "setting" });
  });

  test("nothing found names every place it looked", async () => {
    await assert.rejects(
      findServer({
        configuredPath: undefined,
        workspaceFolder: undefined,
        extensionPath: path.join(root, "e/ext"),
        envPath: path.join(root, "e/empty"),
      }),
      (err: unknown) =>
        err instanceof ServerNotFound &&
        err.message.includes("shapels.server.path is not set") &&
        err.message.includes("PATH") &&
        err.message.includes("pip install shapels") &&
        err.message.includes(path.join(root, "e/ext/server/shapels")),
    );
  });

  test("a relative setting is taken from the workspace folder", async () => {
    const workspace = path.join(root, "f/ws");
    const binary = executable(path.join(workspace, "target/debug/shapels"));
    const found = await findServer({
      configuredPath: "target/debug/shapels",
      workspaceFolder: workspace,
      extensionPath: path.join(root, "f/ext"),
      envPath: "",
    });
    assert.deepEqual(found, { path: binary, source: "setting" });
  });
});

describe("expandPath", () => {
  test("~ and ${workspaceFolder}", () => {
    assert.equal(expandPath("~/bin/shapels", undefined, "/home/u"), path.join("/home/u", "bin/shapels"));
    assert.equal(expandPath("${workspaceFolder}/bin/shapels", "/ws", "/home/u"), "/ws/bin/shapels");
    assert.equal(expandPath("/abs/shapels", "/ws", "/home/u"), "/abs/shapels");
  });

  test("${workspaceFolder} without a folder is an error", () => {
    assert.throws(() => expandPath("${workspaceFolder}/shapels", undefined, "/home/u"), ServerNotFound);
  });
});

describe("pythonEnvironmentCandidates", () => {
  test("the Python extension with no interpreter selected: no candidates, no fallbacks", () => {
    assert.deepEqual(
      pythonEnvironmentCandidates({
        configuredPath: null,
        workspaceFolder: "/ws",
        extensionPath: "/ext",
        envPath: "",
        pythonInterpreter: null,
        virtualEnv: "/venv",
        platform: "linux",
      }),
      [],
    );
  });

  test("Windows keeps binaries in Scripts", () => {
    assert.deepEqual(
      pythonEnvironmentCandidates({
        configuredPath: null,
        workspaceFolder: "/ws",
        extensionPath: "/ext",
        envPath: "",
        virtualEnv: "/venv",
        platform: "win32",
      }),
      [path.join("/venv", "Scripts", "shapels.exe"), path.join("/ws/.venv", "Scripts", "shapels.exe"), path.join("/ws/venv", "Scripts", "shapels.exe")],
    );
  });
});
