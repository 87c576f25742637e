import { chmod, chown, lchown, mkdir, mkdtemp, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "./logger.js";
import { ensurePrivateDir, entriesOfOthers } from "./private-dir.js";

// Giving a file to another user takes root (this project's test runs are root); one case needs it.
const asRoot = process.getuid?.() === 0;
if (!asRoot) console.warn("private-dir.test.ts: not root, so no file can be given to another user; one case skipped");

describe.skipIf(process.platform === "win32")("ensurePrivateDir", () => {
  let root: string;
  const lines: string[] = [];
  const logger = createLogger({ level: "debug", sink: (line) => lines.push(line) });
  const modeOf = async (dir: string) => (await stat(dir)).mode & 0o777;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "private-dir-"));
    lines.length = 0;
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("creates a missing directory 0700", async () => {
    const dir = join(root, "a", "b");
    expect(await ensurePrivateDir(dir, { logger })).toBe("private");
    expect(await modeOf(dir)).toBe(0o700);
  });

  it("tightens an existing 0755 directory of the user's own to 0700, and says so", async () => {
    const dir = join(root, "data");
    await ensurePrivateDir(dir, { logger });
    await chmod(dir, 0o755);
    expect(await ensurePrivateDir(dir, { logger })).toBe("tightened");
    expect(await modeOf(dir)).toBe(0o700);
    expect(lines.join("\n")).toContain("tightened the data directory");
  });

  it("leaves another user's directory alone and warns", async () => {
    const dir = join(root, "shared");
    await ensurePrivateDir(dir, { logger });
    await chmod(dir, 0o755);
    const owner = (await stat(dir)).uid;
    expect(await ensurePrivateDir(dir, { logger, uid: owner + 1 })).toBe("foreign");
    expect(await modeOf(dir)).toBe(0o755);
    expect(lines.join("\n")).toMatch(/WARN .*another user/);
  });

  it("refuses another user's directory that every user can write into (anyone could plant a keys.json)", async () => {
    const dir = join(root, "everyone");
    await ensurePrivateDir(dir, { logger });
    await chmod(dir, 0o1777);
    const owner = (await stat(dir)).uid;
    await expect(ensurePrivateDir(dir, { logger, uid: owner + 1 })).rejects.toMatchObject({
      code: "invalid_request",
      message: expect.stringMatching(/belongs to another user .*every user of this machine can write into it/),
    });
  });

  it("tightens a writable directory of the user's own that holds only the user's files", async () => {
    const dir = join(root, "open");
    await ensurePrivateDir(dir, { logger });
    await writeFile(join(dir, "keys.json"), "{}");
    await chmod(dir, 0o777);
    expect(await ensurePrivateDir(dir, { logger })).toBe("tightened");
    expect(await modeOf(dir)).toBe(0o700);
  });

  it("lists the entries another user owns, nested ones and symbolic links included, not following links", async () => {
    const dir = join(root, "data");
    await mkdir(join(dir, "conversations"), { recursive: true });
    await writeFile(join(dir, "conversations", "index.jsonl"), "");
    await symlink("/etc/passwd", join(dir, "audit.log"));
    const owner = (await stat(dir)).uid;
    expect(entriesOfOthers(dir, owner)).toEqual([]);
    // Root's entries are never another user's (root can do anything anyway): as root, give them to `nobody`;
    // otherwise look at them as another user would.
    let viewer = owner + 1;
    let stranger = owner;
    if (asRoot) {
      for (const name of ["conversations", "audit.log"]) await lchown(join(dir, name), 65534, 65534);
      [viewer, stranger] = [0, 65534];
    }
    // The folder of another user is listed once, not searched.
    const seen = entriesOfOthers(dir, viewer);
    expect(seen.sort()).toEqual([
      `${join(dir, "audit.log")} (uid ${stranger})`,
      `${join(dir, "conversations")} (uid ${stranger})`,
    ]);
  });

  it.runIf(asRoot)(
    "refuses, as it is, a writable directory of the user's own holding another user's file (a planted keys.json)",
    async () => {
      const dir = join(root, "planted");
      await ensurePrivateDir(dir, { logger });
      await chmod(dir, 0o777);
      await writeFile(join(dir, "keys.json"), "{}");
      await chown(join(dir, "keys.json"), 65534, 65534);
      await expect(ensurePrivateDir(dir, { logger })).rejects.toMatchObject({
        code: "invalid_request",
        message: expect.stringContaining(`holds files that are not yours: ${join(dir, "keys.json")} (uid 65534)`),
      });
      // Shared with someone: left as it is for the user to look at, not closed under the other user.
      expect(await modeOf(dir)).toBe(0o777);
    },
  );
});
