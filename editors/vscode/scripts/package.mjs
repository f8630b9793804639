// Packages the extension as a .vsix, with the server inside for one platform.
//
//   npm run package                                            # universal, no server
//   npm run package -- --target linux-x64 --server ../../target/dist/shapels
//
// With `--target` (a VS Code platform, as `vsce package --target` takes:
// linux-x64, darwin-arm64, win32-x64, ...) the binary given by `--server`
// is copied to server/shapels (server/shapels.exe for win32) and the .vsix
// is marked for that platform, as rust-analyzer and ruff ship theirs; the
// binary is checked to be an executable for that platform first. Without
// `--target` the .vsix holds no server and finds one on the machine.
// The result is shapels-<target>-<version>.vsix (shapels-<version>.vsix
// without a target), or the `--out` path.

import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const EXT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** Each platform VS Code publishes for: the executable format and machine it runs. */
const TARGETS = {
  "linux-x64": { format: "elf", machine: "x86_64" },
  "linux-arm64": { format: "elf", machine: "aarch64" },
  "linux-armhf": { format: "elf", machine: "arm" },
  "alpine-x64": { format: "elf", machine: "x86_64" },
  "alpine-arm64": { format: "elf", machine: "aarch64" },
  "darwin-x64": { format: "macho", machine: "x86_64" },
  "darwin-arm64": { format: "macho", machine: "aarch64" },
  "win32-x64": { format: "pe", machine: "x86_64" },
  "win32-arm64": { format: "pe", machine: "aarch64" },
};

function die(message) {
  console.error(`package: ${message}`);
  process.exit(2);
}

/** The format and machine of an executable, from its header; `undefined` when neither is known. */
export function executableKind(bytes) {
  const u16 = (offset, little) => (little ? bytes.readUInt16LE(offset) : bytes.readUInt16BE(offset));
  const u32 = (offset, little) => (little ? bytes.readUInt32LE(offset) : bytes.readUInt32BE(offset));
  if (bytes.length >= 20 && bytes.subarray(0, 4).equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]))) {
    const little = bytes[5] === 1;
    const machine = { 0x3e: "x86_64", 0xb7: "aarch64", 0x28: "arm" }[u16(18, little)];
    return { format: "elf", machine };
  }
  if (bytes.length >= 8) {
    const magicLE = bytes.readUInt32LE(0);
    if (magicLE === 0xfeedfacf || magicLE === 0xcefaedfe) {
      const little = magicLE === 0xfeedfacf;
      const machine = { 0x01000007: "x86_64", 0x0100000c: "aarch64" }[u32(4, little)];
      return { format: "macho", machine };
    }
    // A universal Mach-O binary holds several machines; the one asked for is assumed among them.
    if (bytes.readUInt32BE(0) === 0xcafebabe) return { format: "macho", machine: "universal" };
  }
  if (bytes.length >= 0x40 && bytes[0] === 0x4d && bytes[1] === 0x5a) {
    const pe = bytes.readUInt32LE(0x3c);
    if (pe + 6 <= bytes.length && bytes.readUInt32LE(pe) === 0x00004550) {
      const machine = { 0x8664: "x86_64", 0xaa64: "aarch64" }[bytes.readUInt16LE(pe + 4)];
      return { format: "pe", machine };
    }
  }
  return undefined;
}

function main() {
  const { values } = parseArgs({
    options: {
      target: { type: "string" },
      server: { type: "string" },
      out: { type: "string" },
    },
  });
  const manifest = JSON.parse(fs.readFileSync(path.join(EXT, "package.json"), "utf8"));
  const serverDir = path.join(EXT, "server");
  // Whatever a previous run (or a hand) left in server/ must not end up in
  // this package: a universal .vsix holds no binary, a platform one its own.
  fs.rmSync(serverDir, { recursive: true, force: true });

  const vsceArgs = ["package", "--no-dependencies", "--skip-license", "--allow-missing-repository"];
  let out;
  if (values.target !== undefined) {
    const target = TARGETS[values.target];
    if (target === undefined) {
      die(`unknown --target ${values.target}; one of ${Object.keys(TARGETS).join(", ")}`);
    }
    if (values.server === undefined) {
      die(`--target ${values.target} needs --server, the shapels binary built for it`);
    }
    const binary = path.resolve(values.server);
    if (!fs.existsSync(binary) || !fs.statSync(binary).isFile()) die(`no file at --server ${binary}`);
    const header = Buffer.alloc(4096);
    const fd = fs.openSync(binary, "r");
    const read = fs.readSync(fd, header, 0, header.length, 0);
    fs.closeSync(fd);
    const kind = executableKind(header.subarray(0, read));
    const fits =
      kind !== undefined &&
      kind.format === target.format &&
      (kind.machine === target.machine || kind.machine === "universal");
    if (!fits) {
      const FORMATS = { elf: "an ELF", macho: "a Mach-O", pe: "a Windows (PE)" };
      const what = kind
        ? `${FORMATS[kind.format]} executable for ${kind.machine ?? "an unknown machine"}`
        : "not an executable";
      die(`${binary} is ${what}, not one for ${values.target} (${target.format}, ${target.machine})`);
    }
    const name = values.target.startsWith("win32-") ? "shapels.exe" : "shapels";
    fs.mkdirSync(serverDir, { recursive: true });
    fs.copyFileSync(binary, path.join(serverDir, name));
    fs.chmodSync(path.join(serverDir, name), 0o755);
    vsceArgs.push("--target", values.target);
    out = values.out ?? `shapels-${values.target}-${manifest.version}.vsix`;
    console.log(`bundling ${binary} as server/${name} for ${values.target}`);
  } else {
    if (values.server !== undefined) die("--server needs --target, the platform the binary is for");
    out = values.out ?? `shapels-${manifest.version}.vsix`;
  }
  vsceArgs.push("--out", out);

  const vsce = path.join(EXT, "node_modules", ".bin", process.platform === "win32" ? "vsce.cmd" : "vsce");
  const result = spawnSync(vsce, vsceArgs, { cwd: EXT, stdio: "inherit" });
  fs.rmSync(serverDir, { recursive: true, force: true });
  if (result.error) die(`cannot run ${vsce}: ${result.error.message}`);
  if (result.status !== 0) process.exit(result.status ?? 1);
  const size = fs.statSync(path.resolve(EXT, out)).size;
  console.log(`packaged ${out} (${(size / 1024 / 1024).toFixed(1)} MiB)`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
