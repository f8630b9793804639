// The packaging script's check that a bundled binary fits its platform.

import assert from "node:assert/strict";
import * as fs from "node:fs";
import { test } from "node:test";

import { executableKind } from "./package.mjs";

test("this Node is recognised as the executable it is", () => {
  const header = Buffer.alloc(4096);
  const fd = fs.openSync(process.execPath, "r");
  const read = fs.readSync(fd, header, 0, header.length, 0);
  fs.closeSync(fd);
  const machine = { x64: "x86_64", arm64: "aarch64", arm: "arm" }[process.arch];
  const format = { linux: "elf", darwin: "macho", win32: "pe" }[process.platform];
  const kind = executableKind(header.subarray(0, read));
  assert.equal(kind?.format, format);
  if (format !== "macho" || kind.machine !== "universal") assert.equal(kind?.machine, machine);
});

test("headers of other platforms", () => {
  const elfArm64 = Buffer.alloc(64);
  Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1]).copy(elfArm64);
  elfArm64.writeUInt16LE(0xb7, 18);
  assert.deepEqual(executableKind(elfArm64), { format: "elf", machine: "aarch64" });

  const machoArm64 = Buffer.alloc(64);
  machoArm64.writeUInt32LE(0xfeedfacf, 0);
  machoArm64.writeUInt32LE(0x0100000c, 4);
  assert.deepEqual(executableKind(machoArm64), { format: "macho", machine: "aarch64" });

  const peX64 = Buffer.alloc(256);
  peX64.write("MZ", 0, "latin1");
  peX64.writeUInt32LE(0x80, 0x3c);
  peX64.writeUInt32LE(0x00004550, 0x80);
  peX64.writeUInt16LE(0x8664, 0x84);
  assert.deepEqual(executableKind(peX64), { format: "pe", machine: "x86_64" });

  assert.equal(executableKind(Buffer.from("#!/bin/sh\necho not a binary\n")), undefined);
});
