// Bundles the extension (src/main.ts -> dist/main.js) or, with --tests, the
// unit tests (tests/unit/*.test.ts -> out/tests/). `vscode` is provided by
// the editor at run time and never bundled. esbuild does not type-check:
// `npm run typecheck` (tsc) does, and packaging runs it first.
import * as esbuild from "esbuild";
import { readdirSync } from "node:fs";

const args = new Set(process.argv.slice(2));
const common = {
  bundle: true,
  platform: "node",
  target: "node20",
  format: "cjs",
  external: ["vscode"],
  logLevel: "warning",
};

const options = args.has("--tests")
  ? {
      ...common,
      entryPoints: readdirSync("tests/unit")
        .filter((name) => name.endsWith(".test.ts"))
        .map((name) => `tests/unit/${name}`),
      outdir: "out/tests",
      sourcemap: "inline",
    }
  : {
      ...common,
      entryPoints: ["src/main.ts"],
      outfile: "dist/main.js",
      minify: args.has("--minify"),
      sourcemap: args.has("--minify") ? false : "linked",
    };

if (args.has("--watch")) {
  const context = await esbuild.context(options);
  await context.watch();
} else {
  await esbuild.build(options);
}
