import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ProxyError } from "../../util/errors.js";
import { createFileSpendStore, SPEND_FILE_NAME } from "./spend-store.js";

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});
async function freshDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "cb-spend-"));
  dirs.push(dir);
  return dir;
}
const entry = { microUsd: 5, requests: 1, inputTokens: 1, outputTokens: 1, cachedTokens: 0, reasoningTokens: 0 };

describe("file spend store", () => {
  it("writes spend.json with mode 0600 and keeps the three newest periods of each kind", async () => {
    const dir = await freshDir();
    const store = createFileSpendStore({ dataDir: dir });
    for (const day of ["01", "02", "03", "04"]) await store.add("k", `day:2026-11-${day}`, entry);
    await store.add("k", "month:2026-10", entry);
    const path = join(dir, SPEND_FILE_NAME);
    if (process.platform !== "win32") expect((await stat(path)).mode & 0o777).toBe(0o600);
    const periods = Object.keys((JSON.parse(await readFile(path, "utf8")) as { periods: object }).periods).sort();
    expect(periods).toEqual(["day:2026-11-02", "day:2026-11-03", "day:2026-11-04", "month:2026-10"]);
  });

  it("a corrupt file is never overwritten: every call fails with a 503 naming it", async () => {
    const dir = await freshDir();
    const path = join(dir, SPEND_FILE_NAME);
    await writeFile(path, "{not json");
    const store = createFileSpendStore({ dataDir: dir });
    const error = await store.add("k", "day:2026-11-01", entry).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ProxyError);
    expect((error as ProxyError).status).toBe(503);
    expect((error as ProxyError).message).toContain(path);
    await expect(store.get("k", "day:2026-11-01")).rejects.toThrow(/not valid JSON/);
    expect(await readFile(path, "utf8")).toBe("{not json");
  });
});
