import { mkdtemp, readdir, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ResponseStoreOptions, StoredResponse } from "../types.js";
import { createFileResponseStore } from "./response-store.js";

function record(id: string, storedAt: number): StoredResponse {
  return {
    id,
    response: { id, object: "response", output: [{ type: "message", content: [{ type: "output_text", text: id }] }] },
    input: [{ type: "message", role: "user", content: "hi" }],
    storedAt,
  };
}

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function fileStore(options: ResponseStoreOptions) {
  const root = await mkdtemp(join(tmpdir(), "response-store-"));
  dirs.push(root);
  const dir = join(root, "responses");
  return { store: createFileResponseStore({ ...options, dir }), dir };
}

describe("file response store", () => {
  it("writes 0600 files in a 0700 directory, atomically (no temp files left)", async () => {
    const { store, dir } = await fileStore({ now: () => 0 });
    await store.put(record("resp_a", 0));
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    const names = await readdir(dir);
    expect(names).toHaveLength(1);
    expect(names[0]).toMatch(/^[0-9a-f]{64}\.json$/);
    expect((await stat(join(dir, names[0] ?? ""))).mode & 0o777).toBe(0o600);
  });

  it("survives a restart and discards an unreadable file instead of failing", async () => {
    const { store, dir } = await fileStore({ now: () => 0 });
    await store.put(record("resp_a", 0));
    const reopened = createFileResponseStore({ dir, now: () => 0 });
    expect(await reopened.get("resp_a")).toEqual(record("resp_a", 0));
    const [name] = await readdir(dir);
    await writeFile(join(dir, name ?? ""), "{not json");
    expect(await reopened.get("resp_a")).toBeUndefined();
    expect(await readdir(dir)).toEqual([]);
  });

  it("keeps the virtual key that made a response across a restart", async () => {
    const { store, dir } = await fileStore({ now: () => 0 });
    await store.put({ ...record("resp_k", 0), owner: "key_alice" });
    const reopened = createFileResponseStore({ dir, now: () => 0 });
    expect((await reopened.get("resp_k"))?.owner).toBe("key_alice");
    expect((await reopened.get("resp_k"))?.input).toEqual(record("resp_k", 0).input);
  });

  it("drops the oldest file by modification time when over the bound", async () => {
    const { store, dir } = await fileStore({ now: () => 0, maxEntries: 2 });
    await store.put(record("resp_1", 0));
    await store.put(record("resp_2", 0));
    const [first] = await readdir(dir);
    const old = new Date(0);
    for (const name of await readdir(dir)) await utimes(join(dir, name), old, name === first ? old : new Date(1000));
    await store.put(record("resp_3", 0));
    expect(await readdir(dir)).toHaveLength(2);
    expect(await readdir(dir)).not.toContain(first);
  });
});
