/**
 * loadOnce keeps a load that failed only when its file is gone (dist/ replaced under the server): every call is then
 * answered `server_updated`. Any other failure (out of file descriptors reading the chunk, a throw in the loaded code
 * or its top level) is that call's own error, and the next call loads again. Both ways bin/ runs the bundle: its
 * scripts (tools/script-loader.mjs, the default) and its ES modules (`CURSOR_BRIDGE_SCRIPTS=0`).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { isMissingCode, loadOnce } from "../../src/util/code-on-disk.js";
import { ProxyError } from "../../src/util/errors.js";
// @ts-expect-error: a plain .mjs tool without type declarations
import { loadScriptBundle } from "../../tools/script-loader.mjs";

const dir = mkdtempSync(join(tmpdir(), "cursor-bridge-code-on-disk-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A system error as Node's fs makes it. */
function systemError(code: string, path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: failed, open '${path}'`), { code, syscall: "open", path });
}

describe("loadOnce", () => {
  it("loads again after a load that ran out of file descriptors, and keeps what then loaded", async () => {
    const failures = [systemError("EMFILE", "/srv/dist/chunks/handlers-AB12.js")];
    let loads = 0;
    const handlers = loadOnce(async () => {
      loads++;
      const failure = failures.shift();
      if (failure !== undefined) throw failure;
      return "handlers";
    });
    const first = await handlers().catch((error: unknown) => error);
    expect(first).toMatchObject({ code: "EMFILE" });
    expect(first).not.toBeInstanceOf(ProxyError);
    await expect(handlers()).resolves.toBe("handlers");
    await expect(handlers()).resolves.toBe("handlers");
    expect(loads).toBe(2);
  });

  it("loads again after a throw in what the load builds, and rethrows it as it was", async () => {
    const refused = new ProxyError("backend_unavailable", "try again", { retryable: true });
    let loads = 0;
    const registry = loadOnce(async () => {
      loads++;
      if (loads === 1) throw refused;
      if (loads === 2) throw systemError("ENOMEM", "/proc/self/stat");
      return "registry";
    });
    await expect(registry()).rejects.toBe(refused);
    await expect(registry()).rejects.toMatchObject({ code: "ENOMEM" });
    await expect(registry()).resolves.toBe("registry");
    expect(loads).toBe(3);
  });

  it("keeps a module that is gone as server_updated, the same error every call, without loading again", async () => {
    let loads = 0;
    const gone = loadOnce(() => {
      loads++;
      return import(pathToFileURL(join(dir, "gone-chunk.js")).href);
    });
    const first = await gone().catch((error: unknown) => error);
    expect(first).toBeInstanceOf(ProxyError);
    expect(first).toMatchObject({ code: "backend_unavailable", detail: "server_updated", retryable: false });
    expect((first as ProxyError).cause).toMatchObject({ code: "ERR_MODULE_NOT_FOUND" });
    expect(await gone().catch((error: unknown) => error)).toBe(first);
    expect(loads).toBe(1);
  });

  it("tells a missing script or module from other failures", () => {
    expect(isMissingCode(Object.assign(new Error("x"), { code: "ERR_MODULE_NOT_FOUND" }))).toBe(true);
    expect(isMissingCode(systemError("ENOENT", "/srv/dist/script/chunks/handlers-AB12.js"))).toBe(true);
    // A file the loaded code itself reads is not its code.
    expect(isMissingCode(systemError("ENOENT", "/proc/self/stat"))).toBe(false);
    for (const code of ["EMFILE", "ENFILE", "ENOMEM", "EACCES"])
      expect(isMissingCode(systemError(code, "/srv/dist/chunks/handlers-AB12.js"))).toBe(false);
    expect(isMissingCode(new TypeError("x is not a function"))).toBe(false);
    expect(isMissingCode(undefined)).toBe(false);
  });
});

describe("loadOnce over the bundle's scripts (tools/script-loader.mjs)", () => {
  /** A script as tools/script-chunks.mjs writes one: a function of exports, require, module, import() and the URL. */
  function writeScript(path: string, body: string): void {
    writeFileSync(
      path,
      `(function (exports, require, module, __bridgeImport, __bridgeMetaUrl) {"use strict";\n${body}\n})`,
    );
  }
  const distDir = join(dir, "dist");
  mkdirSync(join(distDir, "script", "chunks"), { recursive: true });
  writeScript(
    join(distDir, "script", "main.js"),
    'exports.load = (name) => __bridgeImport("./chunks/" + name + ".js");',
  );
  // Its top level throws on its first run only.
  const runs = Symbol.for("cursor-bridge.code-on-disk.test.runs");
  writeScript(
    join(distDir, "script", "chunks", "flaky.js"),
    `globalThis[Symbol.for("cursor-bridge.code-on-disk.test.runs")] = (globalThis[Symbol.for("cursor-bridge.code-on-disk.test.runs")] ?? 0) + 1;
if (globalThis[Symbol.for("cursor-bridge.code-on-disk.test.runs")] === 1) throw new Error("first run fails");
exports.value = "flaky loaded";`,
  );
  const main = (loadScriptBundle as (dist: string) => { load(name: string): Promise<{ value?: string }> } | undefined)(
    distDir,
  );

  /** The bundle's main module (this Node runs scripts: 20.12 and later, as bin/ needs for them). */
  function bundle() {
    expect(main, "tools/script-loader.mjs loaded no bundle").toBeDefined();
    return main as NonNullable<typeof main>;
  }

  it("runs a script whose top level threw again on the next call", async () => {
    const flaky = loadOnce(() => bundle().load("flaky"));
    await expect(flaky()).rejects.toThrow("first run fails");
    expect((await flaky()).value).toBe("flaky loaded");
    expect(Reflect.get(globalThis, runs)).toBe(2);
  });

  it("keeps a script that is gone as server_updated", async () => {
    let loads = 0;
    const gone = loadOnce(() => {
      loads++;
      return bundle().load("gone");
    });
    const first = await gone().catch((error: unknown) => error);
    expect(first).toMatchObject({ code: "backend_unavailable", detail: "server_updated" });
    expect((first as ProxyError).cause).toMatchObject({ code: "ENOENT" });
    expect(await gone().catch((error: unknown) => error)).toBe(first);
    expect(loads).toBe(1);
  });
});
