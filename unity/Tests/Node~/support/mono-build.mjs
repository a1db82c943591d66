// The Mono build of the package (Tests/Mono~/build.sh). `cargo test` builds it once and
// passes its folder in RCADIA_UNITY_BUILD; run by hand, the tests build it themselves.

import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const BUILD_SH = fileURLToPath(new URL("../../Mono~/build.sh", import.meta.url));
let built = null;

/** Folder holding ConformanceDriver.exe. */
export function monoBuildDir() {
  if (built) return built;
  let dir = process.env.RCADIA_UNITY_BUILD;
  if (!dir) {
    const own = mkdtempSync(path.join(tmpdir(), "rcadia-unity-"));
    process.on("exit", () => rmSync(own, { recursive: true, force: true }));
    dir = own;
    execFileSync("bash", [BUILD_SH, dir], { stdio: ["ignore", "ignore", "inherit"] });
  }
  if (!existsSync(path.join(dir, "ConformanceDriver.exe"))) {
    throw new Error(`${dir} has no ConformanceDriver.exe: run unity/Tests/Mono~/build.sh DIR first and set RCADIA_UNITY_BUILD=DIR`);
  }
  const mono = spawnSync("mono", ["--version"], { stdio: "ignore" });
  if (mono.error) throw new Error("mono is not installed: install Debian's mono-devel (ops/test does)");
  built = dir;
  return dir;
}

export function driverPath() {
  return path.join(monoBuildDir(), "ConformanceDriver.exe");
}
