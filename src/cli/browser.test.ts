import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { findOnPath, openerCommand, openInBrowser } from "./browser.js";

describe("browser opener", () => {
  it("picks the platform's opener", () => {
    expect(openerCommand("linux", "https://x/?a=1&b=2")).toEqual({ file: "xdg-open", args: ["https://x/?a=1&b=2"] });
    expect(openerCommand("darwin", "https://x/")).toEqual({ file: "open", args: ["https://x/"] });
    expect(openerCommand("win32", "https://x/?a=1&b=2").args).toEqual(["/c", "start", '""', "https://x/?a=1^&b=2"]);
  });

  it.skipIf(process.platform === "win32")("finds only executables on PATH", () => {
    const dir = mkdtempSync(join(tmpdir(), "cb-path-"));
    try {
      writeFileSync(join(dir, "xdg-open"), "#!/bin/sh\nexit 0\n");
      expect(findOnPath("xdg-open", dir, "linux")).toBe(false);
      chmodSync(join(dir, "xdg-open"), 0o755);
      expect(findOnPath("xdg-open", dir, "linux")).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("does not start anything when no opener exists", async () => {
    expect(await openInBrowser("https://example.com/", { platform: "linux", env: { PATH: "" } })).toBe(false);
  });
});
