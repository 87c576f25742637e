import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createFileAuditLog } from "./audit-log.js";
import { createFileKeyStore } from "./key-store.js";

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});
async function freshDir() {
  const dir = await mkdtemp(join(tmpdir(), "cb-keys-"));
  dirs.push(dir);
  return dir;
}
const record = { id: "key_1", name: "alice", hash: "a".repeat(64), prefix: "cbk-abcdef", createdAt: "x", limits: {} };

describe("file key store and audit log", () => {
  it.skipIf(process.platform === "win32")("keys.json and audit.log are mode 0600; no lock file stays", async () => {
    const dir = await freshDir();
    await createFileKeyStore({ dir }).create(record);
    const audit = createFileAuditLog({ dir });
    await audit.append({ at: "t", actor: "cli:me", action: "key.create", target: "alice" });
    expect((await stat(join(dir, "keys.json"))).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, "audit.log"))).mode & 0o777).toBe(0o600);
    await expect(stat(join(dir, "keys.json.lock"))).rejects.toThrow();
  });

  it("an audit log made with a looser mode is tightened on the next append", async () => {
    const dir = await freshDir();
    await writeFile(join(dir, "audit.log"), "", { mode: 0o644 });
    await createFileAuditLog({ dir }).append({ at: "t", actor: "a", action: "b" });
    expect((await stat(join(dir, "audit.log"))).mode & 0o777).toBe(0o600);
  });

  it("a corrupt key file is refused and left untouched", async () => {
    const dir = await freshDir();
    await writeFile(join(dir, "keys.json"), "{not json");
    const store = createFileKeyStore({ dir });
    await expect(store.list()).rejects.toThrow(/not valid JSON/);
    await expect(store.create(record)).rejects.toThrow(/not valid JSON/);
    expect(await readFile(join(dir, "keys.json"), "utf8")).toBe("{not json");
  });

  it("torn or foreign audit lines are skipped when reading", async () => {
    const dir = await freshDir();
    await writeFile(join(dir, "audit.log"), '{"at":"t","actor":"a","action":"b"}\n{"at":\nnot json\n', { mode: 0o600 });
    expect(await createFileAuditLog({ dir }).read()).toEqual([{ at: "t", actor: "a", action: "b" }]);
  });
});
