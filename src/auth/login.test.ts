import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFileCredentialStore } from "../stores/file/credential-store.js";
import { createMemoryCredentialStore } from "../stores/memory/credential-store.js";
import type { ProxyError } from "../util/errors.js";
import { cursorCliAuthFile } from "../util/paths.js";
import type { FetchLike } from "./http.js";
import { importCredentials, loginWithApiKey, loginWithBrowser, readCredentialStatus } from "./login.js";
import { pkceChallenge } from "./pkce.js";

const NOW = 1_800_000_000_000;
const now = () => NOW;
function makeJwt(payload: Record<string, unknown>): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${encode({ alg: "HS256", typ: "JWT" })}.${encode(payload)}.c2ln`;
}
const ACCESS = makeJwt({ exp: NOW / 1000 + 3600, sub: "auth0|user_tok", email: "jwt@example.com" });

describe("loginWithBrowser", () => {
  it("shows the URL, polls with the matching verifier and stores the tokens", async () => {
    const polled: URL[] = [];
    const fetch: FetchLike = async (url) => {
      polled.push(new URL(url));
      if (polled.length < 3) return new Response(null, { status: 404 });
      return Response.json({ accessToken: ACCESS, refreshToken: "refresh-1", authId: "auth0|user_poll" });
    };
    const store = createMemoryCredentialStore();
    let shown = "";
    const status = await loginWithBrowser({
      websiteUrl: "https://site.test",
      apiUrl: "https://api.test",
      store,
      fetch,
      now,
      sleep: async () => {},
      onLoginUrl: (url) => {
        shown = url;
      },
    });
    const loginUrl = new URL(shown);
    expect(loginUrl.origin + loginUrl.pathname).toBe("https://site.test/loginDeepControl");
    const verifier = polled[0]?.searchParams.get("verifier") ?? "";
    expect(loginUrl.searchParams.get("challenge")).toBe(await pkceChallenge(verifier));
    expect(polled[0]?.searchParams.get("uuid")).toBe(loginUrl.searchParams.get("uuid"));
    expect(shown).not.toContain(verifier);
    expect(status).toMatchObject({ source: "login", email: "jwt@example.com", userId: "user_poll", expired: false });
    expect(await store.load()).toMatchObject({ accessToken: ACCESS, refreshToken: "refresh-1", source: "login" });
    expect(JSON.stringify(status)).not.toContain(ACCESS);
  });
});

describe("loginWithApiKey", () => {
  it("exchanges the key and keeps it for refreshes", async () => {
    let bearer = "";
    const fetch: FetchLike = async (_url, init) => {
      bearer = new Headers(init.headers).get("authorization") ?? "";
      return Response.json({ accessToken: ACCESS, refreshToken: "refresh-k" });
    };
    const store = createMemoryCredentialStore();
    const status = await loginWithApiKey("key_abcdefghijkl", { apiUrl: "https://api.test", fetch, store, now });
    expect(bearer).toBe("Bearer key_abcdefghijkl");
    expect(status).toMatchObject({ source: "api-key", hasApiKey: true, userId: "user_tok" });
    expect(await store.load()).toMatchObject({ apiKey: "key_abcdefghijkl", source: "api-key" });
  });
});

describe("importCredentials and readCredentialStatus", () => {
  let home: string;
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), "cb-login-"));
  });
  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it("stores imported CLI credentials and refuses to replace an invalid file unless told", async () => {
    const paths = { env: {}, platform: "linux" as const, homedir: home };
    const authPath = cursorCliAuthFile(paths);
    await mkdir(dirname(authPath), { recursive: true });
    await writeFile(authPath, JSON.stringify({ accessToken: ACCESS, refreshToken: "refresh-cli" }));
    const configDir = join(home, "bridge");
    await mkdir(configDir, { recursive: true });
    await writeFile(join(configDir, "credentials.json"), "{broken");
    const store = createFileCredentialStore({ configDir });

    const refused = (await importCredentials({ paths, store, now }).catch((e: unknown) => e)) as ProxyError;
    expect(refused.detail).toBe("invalid_credentials_file");
    await expect(readCredentialStatus(store, now)).rejects.toMatchObject({ detail: "invalid_credentials_file" });

    const { report, status } = await importCredentials({ paths, store, now, overwriteInvalid: true });
    expect(report.chosen).toBe("cli-file");
    expect(status).toMatchObject({ source: "import:cli", email: "jwt@example.com", userId: "user_tok" });
    const current = await readCredentialStatus(store, now);
    expect(current).toMatchObject({ location: store.location, source: "import:cli", hasApiKey: false });
    expect(JSON.stringify([report, status, current])).not.toContain(ACCESS);
    expect(JSON.stringify([report, status, current])).not.toContain("refresh-cli");
  });

  it("reports not logged in as undefined", async () => {
    await expect(readCredentialStatus(createMemoryCredentialStore())).resolves.toBeUndefined();
  });
});
