import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_CLIENT_VERSION, newestAgentVersion, resolveClientVersion } from "./client-version.js";

describe("resolveClientVersion", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "cb-versions-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("prefers the configured value, then env, then cursor-agent, then the default", () => {
    mkdirSync(join(dir, "2026.02.13-41ac335"));
    const env = { CURSOR_CLIENT_VERSION: "cli-2026.03.01-aaaaaaa" };
    expect(resolveClientVersion({ configured: "cli-2099.01.01-bbbbbbb", env, agentVersionsDir: dir })).toEqual({
      version: "cli-2099.01.01-bbbbbbb",
      source: "config",
    });
    expect(resolveClientVersion({ env, agentVersionsDir: dir })).toEqual({
      version: "cli-2026.03.01-aaaaaaa",
      source: "env",
    });
    expect(resolveClientVersion({ env: {}, agentVersionsDir: dir })).toEqual({
      version: "cli-2026.02.13-41ac335",
      source: "cursor-agent",
    });
    expect(resolveClientVersion({ env: {}, agentVersionsDir: join(dir, "missing") })).toEqual({
      version: DEFAULT_CLIENT_VERSION,
      source: "default",
    });
  });

  it("defaults to the newest CLI build the references name (cursor-protocol-addendum-3.md E8)", () => {
    expect(DEFAULT_CLIENT_VERSION).toBe("cli-2026.10.01-e373342");
  });

  it("treats blank settings as unset and adds the cli- prefix to bare versions", () => {
    expect(resolveClientVersion({ configured: "  ", env: { CURSOR_CLIENT_VERSION: "2026.01.09-231024f" } })).toEqual({
      version: "cli-2026.01.09-231024f",
      source: "env",
    });
  });

  it("picks the newest version directory and ignores files and foreign names", () => {
    for (const name of ["2025.11.25-d5b3271", "2026.01.17-d239e66", "2026.01.09-231024f", "latest", "tmp-123"]) {
      mkdirSync(join(dir, name));
    }
    writeFileSync(join(dir, "2099.12.31-fffffff"), "a file, not an install");
    expect(newestAgentVersion(dir)).toBe("2026.01.17-d239e66");
    expect(resolveClientVersion({ env: {}, agentVersionsDir: dir }).version).toBe("cli-2026.01.17-d239e66");
  });

  it("returns undefined for an empty folder", () => {
    expect(newestAgentVersion(dir)).toBeUndefined();
  });
});
