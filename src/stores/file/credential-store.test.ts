import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ProxyError } from "../../util/errors.js";
import type { CredentialsInput } from "../types.js";
import { createFileCredentialStore } from "./credential-store.js";

const posixOnly = process.platform === "win32";
if (posixOnly) console.log("credential-store mode tests skipped: POSIX permissions do not exist on Windows");

const input: CredentialsInput = {
  accessToken: "access-secret-1",
  refreshToken: "refresh-secret-1",
  source: "login",
  email: "a@example.com",
  userId: "user_1",
};
const fixedNow = () => new Date("2026-01-02T03:04:05.000Z");

describe("createFileCredentialStore", () => {
  let root: string;
  let dir: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "cb-store-"));
    dir = join(root, "config", "cursor-bridge");
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("returns undefined when nothing is stored", async () => {
    const store = createFileCredentialStore({ configDir: dir });
    expect(store.location).toBe(join(dir, "credentials.json"));
    await expect(store.load()).resolves.toBeUndefined();
  });

  it("saves and loads a versioned record", async () => {
    const store = createFileCredentialStore({ configDir: dir, now: fixedNow });
    const saved = await store.save(input);
    expect(saved).toEqual({ ...input, version: 1, savedAt: "2026-01-02T03:04:05.000Z" });
    await expect(store.load()).resolves.toEqual(saved);
    expect(JSON.parse(await readFile(store.location, "utf8"))).toEqual(saved);
  });

  it.skipIf(posixOnly)("writes the file 0600 in a 0700 directory and tightens a looser directory", async () => {
    await mkdir(dir, { recursive: true, mode: 0o755 });
    await chmod(dir, 0o755);
    const store = createFileCredentialStore({ configDir: dir });
    await store.save(input);
    expect((await stat(store.location)).mode & 0o777).toBe(0o600);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
  });

  it.skipIf(posixOnly)("tightens a loose file on load", async () => {
    const store = createFileCredentialStore({ configDir: dir });
    await store.save(input);
    await chmod(store.location, 0o644);
    await store.load();
    expect((await stat(store.location)).mode & 0o777).toBe(0o600);
  });

  it("replaces atomically and leaves no temp files", async () => {
    const store = createFileCredentialStore({ configDir: dir });
    await store.save(input);
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        store.save({ ...input, accessToken: `access-${i}`, refreshToken: `r-${i}` }),
      ),
    );
    expect(await readdir(dir)).toEqual(["credentials.json"]);
    const loaded = await store.load();
    expect(loaded?.accessToken).toMatch(/^access-\d$/);
    expect(loaded?.refreshToken).toBe(`r-${loaded?.accessToken.slice("access-".length)}`);
  });

  it.each([
    ["corrupt JSON", '{"accessToken": "corrupt-secret-token"'],
    ["a foreign file", JSON.stringify({ cursor: { type: "oauth", access: "foreign-secret-token" } })],
    ["a future version", JSON.stringify({ version: 2, accessToken: "future-secret-token", refreshToken: "r" })],
  ])("refuses %s on load and save, naming the path but no token", async (_name, contents) => {
    await mkdir(dir, { recursive: true });
    const path = join(dir, "credentials.json");
    await writeFile(path, contents);
    const store = createFileCredentialStore({ configDir: dir });
    for (const attempt of [() => store.load(), () => store.save(input)]) {
      const error = (await attempt().catch((e: unknown) => e)) as ProxyError;
      expect(error).toBeInstanceOf(ProxyError);
      expect(error.detail).toBe("invalid_credentials_file");
      expect(error.message).toContain(path);
      expect(error.message).not.toMatch(/secret-token/);
    }
    expect(await readFile(path, "utf8")).toBe(contents);
  });

  describe("after a load (the file's stats stand for it until it changes)", () => {
    it("sees another writer's atomic save and an edit in place of the same size", async () => {
      const store = createFileCredentialStore({ configDir: dir });
      const other = createFileCredentialStore({ configDir: dir });
      await store.save(input);
      expect((await store.load())?.accessToken).toBe("access-secret-1");
      await other.save({ ...input, accessToken: "access-secret-2" });
      expect((await store.load())?.accessToken).toBe("access-secret-2");
      const text = await readFile(store.location, "utf8");
      await writeFile(store.location, text.replace("access-secret-2", "access-secret-3"));
      expect((await store.load())?.accessToken).toBe("access-secret-3");
    });

    it.skipIf(posixOnly)("tightens a file loosened since", async () => {
      const store = createFileCredentialStore({ configDir: dir });
      await store.save(input);
      await store.load();
      await chmod(store.location, 0o644);
      await store.load();
      expect((await stat(store.location)).mode & 0o777).toBe(0o600);
    });

    it("answers a removed file with nothing and a corrupted one with the error", async () => {
      const store = createFileCredentialStore({ configDir: dir });
      await store.save(input);
      await store.load();
      await store.clear();
      await expect(store.load()).resolves.toBeUndefined();
      await store.save(input);
      await store.load();
      await writeFile(store.location, "garbage");
      await expect(store.load()).rejects.toMatchObject({ detail: "invalid_credentials_file" });
    });

    it("returns a record of its own each time", async () => {
      const store = createFileCredentialStore({ configDir: dir });
      await store.save(input);
      const first = await store.load();
      if (first === undefined) throw new Error("nothing loaded");
      first.accessToken = "changed by the caller";
      expect((await store.load())?.accessToken).toBe(input.accessToken);
    });
  });

  it("overwrites an invalid file only when asked", async () => {
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "credentials.json"), "garbage");
    const store = createFileCredentialStore({ configDir: dir });
    await store.save(input, { overwriteInvalid: true });
    expect((await store.load())?.accessToken).toBe(input.accessToken);
  });
});
