import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ProxyError } from "../../util/errors.js";
import { createFileSettleQueue } from "./settle-queue.js";
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

  it("a write the disk refuses keeps the spend: budgets see it, and the file gets it once the disk takes it", async () => {
    // The data directory removed under the server stands for a full or read-only disk: every write of the file fails.
    const dir = join(await freshDir(), "data");
    await mkdir(dir);
    const store = createFileSpendStore({ dataDir: dir, rewriteMs: 50 });
    await store.add("k", "day:2026-11-01", entry);
    await rm(dir, { recursive: true });
    const refused = await store.settle({ keyId: "k", period: "day:2026-11-01", id: "r1", entry });
    expect(refused.after.microUsd).toBe(10);
    expect((await store.get("k", "day:2026-11-01")).requests).toBe(2);
    // The budget counts it: 10 spent + 1 over a budget of 10 is refused.
    const reserve = { keyId: "k", period: "day:2026-11-01", id: "r2", microUsd: 1, now: 0, leaseMs: 30_000 };
    expect((await store.reserve({ ...reserve, budgetMicroUsd: 10 })).admitted).toBe(false);
    await mkdir(dir);
    const path = join(dir, SPEND_FILE_NAME);
    let written: unknown;
    for (let i = 0; i < 200 && written === undefined; i += 1) {
      written = await readFile(path, "utf8").then(JSON.parse, () => undefined);
      if (written === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(written).toMatchObject({ periods: { "day:2026-11-01": { k: { microUsd: 10, requests: 2 } } } });
  });
});

describe("file spend store at shutdown", () => {
  it("close writes what the disk refused before the rewrite timer came round", async () => {
    const dir = join(await freshDir(), "data");
    await mkdir(dir);
    // A rewrite timer that never comes round in the test: only close() can write it.
    const store = createFileSpendStore({ dataDir: dir, rewriteMs: 3_600_000 });
    await store.add("k", "day:2026-11-01", entry);
    await rm(dir, { recursive: true });
    await store.settle({ keyId: "k", period: "day:2026-11-01", id: "r1", entry });
    await mkdir(dir);
    await store.close?.();
    const written = JSON.parse(await readFile(join(dir, SPEND_FILE_NAME), "utf8")) as unknown;
    expect(written).toMatchObject({ periods: { "day:2026-11-01": { k: { microUsd: 10, requests: 2 } } } });
  });
});

describe("file spend store: running requests", () => {
  const day = "day:2026-11-01";
  const soFar = { ...entry, microUsd: 7 };

  it("records them at its next write; a store opened on the file after a crash charges them", async () => {
    const dir = await freshDir();
    const store = createFileSpendStore({ dataDir: dir });
    store.noteRunning?.([{ keyId: "k", period: day, id: "r1", entry: soFar }]);
    await store.close?.();
    const written = JSON.parse(await readFile(join(dir, SPEND_FILE_NAME), "utf8")) as unknown;
    expect(written).toMatchObject({ running: { r1: { keyId: "k", period: day, microUsd: 7 } } });
    // The process died there: the next one charges what it recorded, once, whatever it writes afterwards.
    const next = createFileSpendStore({ dataDir: dir });
    expect((await next.get("k", day)).microUsd).toBe(7);
    await next.add("k", day, entry);
    const again = createFileSpendStore({ dataDir: dir });
    expect(await again.get("k", day)).toMatchObject({ microUsd: 12, requests: 2 });
  });

  it("charges them once even when the next process stops or dies before any request settles", async () => {
    const dir = await freshDir();
    const crashed = createFileSpendStore({ dataDir: dir });
    crashed.noteRunning?.([{ keyId: "k", period: day, id: "r1", entry: soFar }]);
    await crashed.close?.();
    // The next process only reads the spend, then stops (or dies) with nothing of its own to write.
    const next = createFileSpendStore({ dataDir: dir });
    expect((await next.get("k", day)).microUsd).toBe(7);
    await next.close?.();
    const written = JSON.parse(await readFile(join(dir, SPEND_FILE_NAME), "utf8")) as Record<string, unknown>;
    expect(written.running).toBeUndefined();
    expect((await createFileSpendStore({ dataDir: dir }).get("k", day)).microUsd).toBe(7);
  });

  it("a settle replaces the record by the real cost in the same write", async () => {
    const dir = await freshDir();
    const store = createFileSpendStore({ dataDir: dir });
    store.noteRunning?.([{ keyId: "k", period: day, id: "r1", entry: soFar }]);
    await store.settle({ keyId: "k", period: day, id: "r1", entry });
    const written = JSON.parse(await readFile(join(dir, SPEND_FILE_NAME), "utf8")) as Record<string, unknown>;
    expect(written.running).toBeUndefined();
    expect(await createFileSpendStore({ dataDir: dir }).get("k", day)).toMatchObject({ microUsd: 5, requests: 1 });
  });
});

describe("file settle queue", () => {
  it("keeps in memory what it could not write, so it is still retried", async () => {
    const dir = join(await freshDir(), "data");
    await mkdir(dir);
    const queue = createFileSettleQueue({ dataDir: dir });
    await rm(dir, { recursive: true });
    const item = {
      keyId: "k",
      id: "r1",
      period: "day:2026-11-01",
      entry,
      tokens: 2,
      finishedAt: 1,
      countersDone: true,
    };
    await expect(queue.push(item)).rejects.toThrow();
    expect((await queue.list()).map((kept) => kept.id)).toEqual(["r1"]);
    await mkdir(dir);
    await queue.remove(["r1"]);
    expect(await queue.list()).toEqual([]);
  });
});
