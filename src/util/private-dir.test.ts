import { chmod, mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "./logger.js";
import { ensurePrivateDir } from "./private-dir.js";

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
});
