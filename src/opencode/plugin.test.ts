/**
 * The plugin's hooks under Node with a real bridge child (`node bin/cursor-bridge.js serve`) against an in-process
 * emulator: model discovery and its cache, the loader's fetch, the `provider.models` hook, the login methods, and the
 * child's lifetime. OpenCode itself drives the same plugin in test/e2e/opencode-plugin.test.ts.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { pngImage } from "../../test/support/images.js";
import { isAlive } from "../../test/support/processes.js";
import { type Emulator, startEmulator } from "../emulator/index.js";
import { type BridgeChild, type BridgeChildOptions, checkNodeVersion, locateNode, startBridgeChild } from "./child.js";
import { createCursorPlugin, PLUGIN_BASE_URL } from "./plugin.js";
import type { CatalogModel, Hooks, OpenCodeAuth, OpenCodeConfig } from "./types.js";

const API_KEY = "plugin-hooks-key";
const BIN = fileURLToPath(new URL("../../bin/cursor-bridge.js", import.meta.url));

describe("OpenCode plugin hooks (Node, real bridge child, emulator)", () => {
  let emulator: Emulator;
  let home: string;
  const children: BridgeChild[] = [];

  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, apiKeys: [API_KEY] });
    home = mkdtempSync(join(tmpdir(), "cursor-bridge-plugin-"));
  });
  afterAll(async () => {
    for (const child of children) child.stop();
    await emulator?.close();
    rmSync(home, { recursive: true, force: true });
  });

  /** A plugin instance in its own XDG directories; `stored` is what OpenCode's auth store holds. */
  async function plugin(
    name: string,
    stored: OpenCodeAuth | undefined,
    options: { startChild?: typeof startBridgeChild; set?: (auth: OpenCodeAuth) => Promise<void> } = {},
  ) {
    const startChild = options.startChild ?? startBridgeChild;
    const dir = join(home, name);
    const env: Record<string, string | undefined> = {
      PATH: process.env.PATH,
      HOME: dir,
      XDG_CONFIG_HOME: join(dir, "config"),
      XDG_DATA_HOME: join(dir, "data"),
      XDG_CACHE_HOME: join(home, "shared-cache"),
      CURSOR_API_URL: emulator.url,
      CURSOR_WEBSITE_URL: emulator.url,
      ...(stored === undefined ? {} : { OPENCODE_AUTH_CONTENT: JSON.stringify({ cursor: stored }) }),
    };
    const writes: OpenCodeAuth[] = [];
    const started = vi.fn(async (options: BridgeChildOptions) => {
      const child = await startChild(options);
      children.push(child);
      return child;
    });
    const hooks: Hooks = await createCursorPlugin({
      env,
      paths: { env, platform: "linux", homedir: dir },
      binPath: BIN,
      startChild: started,
    })({
      client: {
        auth: {
          set: async ({ body }) => {
            await options.set?.(body);
            writes.push(body);
          },
        },
      },
      directory: dir,
      worktree: dir,
    });
    return { hooks, started, writes };
  }

  it("registers provider cursor with the bridge's models (user entries win), caches them, starts one child", async () => {
    const { hooks, started } = await plugin("first", { type: "api", key: API_KEY });
    const config: OpenCodeConfig = { provider: { cursor: { models: { "composer-1": { name: "My Composer" } } } } };
    await hooks.config?.(config);
    const provider = config.provider?.cursor;
    expect(provider?.npm).toBe("@ai-sdk/openai-compatible");
    expect(provider?.options?.baseURL).toBe(PLUGIN_BASE_URL);
    expect(provider?.models?.["composer-1"]).toEqual({ name: "My Composer" });
    expect(provider?.models?.["gpt-5.2"]).toMatchObject({
      tool_call: true,
      limit: { context: 272_000, output: 32_000 },
      modalities: { input: ["text", "image"], output: ["text"] },
    });
    expect(provider?.models?.["grok-code-fast-1"]).toMatchObject({
      attachment: false,
      modalities: { input: ["text"] },
    });
    expect(provider?.models?.auto).toBeDefined();
    expect(started).toHaveBeenCalledTimes(1);

    // The loader hands OpenCode a fetch that reaches the same child with its per-run key.
    const loaded = await hooks.auth?.loader?.(async () => ({ type: "api", key: API_KEY }), { options: {} });
    expect(loaded?.baseURL).toBe(PLUGIN_BASE_URL);
    const pluginFetch = loaded?.fetch as typeof fetch;
    const response = await pluginFetch(`${PLUGIN_BASE_URL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer cursor-bridge-plugin" },
      body: JSON.stringify({ model: "composer-1", messages: [{ role: "user", content: "hello plugin" }] }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { choices: Array<{ message: { content: string } }> };
    expect(body.choices[0]?.message.content).toContain("You said: hello plugin");
    expect(started).toHaveBeenCalledTimes(1);

    // Without the per-run key the child refuses.
    const child = children.at(-1) as BridgeChild;
    const anonymous = await fetch(`${child.baseURL}/models`);
    expect(anonymous.status).toBe(401);
    await anonymous.text();

    await hooks.dispose?.();
    await vi.waitFor(() => expect(isAlive(child.pid)).toBe(false), { timeout: 5_000 });
  }, 60_000);

  it("streams reasoning and usage, takes images and continues conversations through the loader's fetch", async () => {
    const { hooks, started } = await plugin("features", { type: "api", key: API_KEY });
    const loaded = await hooks.auth?.loader?.(async () => ({ type: "api", key: API_KEY }), {});
    const pluginFetch = loaded?.fetch as typeof fetch;
    const chat = (body: Record<string, unknown>) =>
      pluginFetch(`${PLUGIN_BASE_URL}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });

    const streamed = await chat({
      model: "claude-4.5-sonnet-thinking",
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: "user", content: "Think first [[emu:think 5]]" }],
    });
    expect(streamed.headers.get("content-type")).toContain("text/event-stream");
    const chunks = (await streamed.text())
      .split("\n")
      .filter((line) => line.startsWith("data: {"))
      .map(
        (line) => JSON.parse(line.slice(6)) as { choices: Array<{ delta: Record<string, string> }>; usage?: unknown },
      );
    const reasoning = chunks.map((c) => c.choices[0]?.delta.reasoning_content ?? "").join("");
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
    expect(reasoning.length).toBeGreaterThan(0);
    expect(text).toContain("You said: Think first");
    expect(chunks.at(-1)?.usage).toMatchObject({ completion_tokens: expect.any(Number) });

    const png = pngImage(40, 30);
    const described = await chat({
      model: "composer-1",
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "What is it? [[emu:describe-image]]" },
            { type: "image_url", image_url: { url: `data:image/png;base64,${png.toString("base64")}` } },
          ],
        },
      ],
    });
    const description = (await described.json()) as { choices: Array<{ message: { content: string } }> };
    expect(description.choices[0]?.message.content).toContain(`Image 1: image/png 40x30, ${png.length} bytes`);

    const before = emulator.stats().turns.length;
    const first = [{ role: "user", content: "remember the plugin" }];
    const answer = (await (await chat({ model: "composer-1", messages: first })).json()) as {
      choices: Array<{ message: { content: string } }>;
    };
    const recalled = (await (
      await chat({
        model: "composer-1",
        messages: [
          ...first,
          { role: "assistant", content: answer.choices[0]?.message.content ?? "" },
          { role: "user", content: "[[emu:recall]]" },
        ],
      })
    ).json()) as { choices: Array<{ message: { content: string } }> };
    expect(recalled.choices[0]?.message.content).toBe("First message: remember the plugin");
    const turns = emulator.stats().turns.slice(before);
    expect(turns).toHaveLength(2);
    expect(turns[1]?.conversationId).toBe(turns[0]?.conversationId);
    expect(started).toHaveBeenCalledTimes(1);
    await hooks.dispose?.();
  }, 60_000);

  it("refreshes an expired login for the child and keeps the rotated pair until OpenCode's store takes it", async () => {
    const old = emulator.issueTokens({ expiresInSeconds: -60 });
    let attempts = 0;
    const { hooks, writes } = await plugin("refresh", undefined, {
      set: async () => {
        if (++attempts === 1) throw new Error("store busy");
      },
    });
    const stored: OpenCodeAuth = { type: "oauth", refresh: old.refreshToken, access: old.accessToken, expires: 0 };
    const loaded = await hooks.auth?.loader?.(async () => stored, {});
    const pluginFetch = loaded?.fetch as typeof fetch;
    const ask = async () => {
      const response = await pluginFetch(`${PLUGIN_BASE_URL}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "composer-1", messages: [{ role: "user", content: "refresh me" }] }),
      });
      expect(response.status).toBe(200);
      await response.text();
    };
    // The child's token request makes the plugin refresh; the store refuses the first write, the request still
    // succeeds on the new token, and a later token request writes the rotated pair the plugin kept.
    await ask();
    await ask();
    await vi.waitFor(() => expect(writes).toHaveLength(1));
    expect(attempts).toBe(2);
    const written = writes[0];
    if (written?.type !== "oauth") throw new Error("no oauth record written");
    // Cursor's OAuth refresh keeps the refresh token.
    expect(written.refresh).toBe(old.refreshToken);
    expect(written.access).not.toBe(old.accessToken);
    expect(written.expires).toBeGreaterThan(Date.now());
    await hooks.dispose?.();
  }, 60_000);

  it("uses the fresh cached list at the next start without starting a bridge", async () => {
    const { hooks, started } = await plugin("second", { type: "api", key: API_KEY });
    const config: OpenCodeConfig = {};
    await hooks.config?.(config);
    expect(Object.keys(config.provider?.cursor?.models ?? {})).toContain("claude-4.5-sonnet");
    expect(started).not.toHaveBeenCalled();
  });

  it("without a Cursor credential: only `auto`, starts nothing, and a request is told to run opencode auth login", async () => {
    const { hooks, started } = await plugin("logged-out", undefined);
    const config: OpenCodeConfig = {};
    await hooks.config?.(config);
    expect(Object.keys(config.provider?.cursor?.models ?? {})).toEqual(["auto"]);
    const fetchOf = config.provider?.cursor?.options?.fetch as (url: string, init?: RequestInit) => Promise<Response>;
    const answer = await fetchOf("http://cursor-bridge.localhost/v1/chat/completions", { method: "POST", body: "{}" });
    expect(answer.status).toBe(401);
    expect(answer.headers.get("x-should-retry")).toBe("false");
    const body = (await answer.json()) as { error: { message: string; code: string } };
    expect(body.error.code).toBe("not_logged_in");
    expect(body.error.message).toContain("opencode auth login");
    expect(started).not.toHaveBeenCalled();
  });

  it("provider.models lists catalog entries for a stored credential, keeping OpenCode's own entries", async () => {
    const { hooks } = await plugin("catalog", undefined);
    const own = { id: "composer-1", name: "Configured" } as CatalogModel;
    const models = await hooks.provider?.models?.(
      { id: "cursor", models: { "composer-1": own } },
      { auth: { type: "api", key: API_KEY } },
    );
    expect(models?.["composer-1"]).toBe(own);
    expect(models?.["gemini-3.1-pro"]).toMatchObject({
      providerID: "cursor",
      api: { id: "gemini-3.1-pro", npm: "@ai-sdk/openai-compatible" },
      capabilities: { toolcall: true, input: { image: true } },
      limit: { context: 1_000_000 },
    });
    const without = await hooks.provider?.models?.({ id: "cursor", models: {} }, {});
    expect(without).toEqual({});
  });

  it("login methods: the browser flow returns Cursor tokens once approved; an API key is checked by exchange", async () => {
    const { hooks } = await plugin("login", undefined);
    const methods = hooks.auth?.methods ?? [];
    const browser = methods.find((m) => m.label.startsWith("Log in with Cursor"));
    if (browser?.type !== "oauth") throw new Error("no browser login method");
    const authorization = await browser.authorize();
    expect(authorization.method).toBe("auto");
    const url = new URL(authorization.url);
    expect(url.pathname).toBe("/loginDeepControl");
    expect(url.searchParams.get("redirectTarget")).toBe("cli");
    emulator.approveLogin(url.searchParams.get("uuid") ?? "");
    await (await fetch(authorization.url)).text();
    const result = await authorization.callback();
    expect(result).toMatchObject({ type: "success" });
    if (result.type !== "success" || !("access" in result)) throw new Error("no tokens");
    expect(result.expires).toBeGreaterThan(Date.now());
    expect(result.refresh).not.toBe("");

    // The key is asked once, by OpenCode's own masked "Enter your API key": no clear-text prompt of ours before it,
    // and no authorize() (OpenCode would pass it only our prompts' answers); tokens.test.ts checks a wrong key's error.
    const apiKey = methods.find((m) => m.type === "api");
    if (apiKey?.type !== "api") throw new Error("no API key method");
    expect(apiKey.prompts).toBeUndefined();
    expect(apiKey.authorize).toBeUndefined();
  });

  it("offers the Cursor CLI import only where its login exists, and takes its tokens", async () => {
    const { hooks } = await plugin("no-cli", undefined);
    expect(hooks.auth?.methods.map((m) => m.label)).toHaveLength(2);

    const pair = emulator.issueTokens();
    const cliDir = join(home, "with-cli", "config", "cursor");
    mkdirSync(cliDir, { recursive: true });
    writeFileSync(
      join(cliDir, "auth.json"),
      JSON.stringify({ accessToken: pair.accessToken, refreshToken: pair.refreshToken }),
    );
    const withCli = await plugin("with-cli", undefined);
    const importer = withCli.hooks.auth?.methods.find((m) => m.label.includes("Cursor CLI"));
    if (importer?.type !== "oauth") throw new Error("no import method");
    const result = await (await importer.authorize()).callback();
    expect(result).toMatchObject({ type: "success", access: pair.accessToken, refresh: pair.refreshToken });
  });

  it("says clearly when no Node.js 20 or newer is available", async () => {
    expect(() => locateNode({ PATH: join(home, "nowhere") })).toThrow(/Node\.js 20 or newer on PATH/);
    const fake = join(home, "old-node");
    writeFileSync(fake, "#!/bin/sh\necho 18.19.0\n");
    chmodSync(fake, 0o755);
    expect(locateNode({ CURSOR_BRIDGE_NODE: fake, PATH: "" })).toBe(fake);
    await expect(checkNodeVersion(fake)).rejects.toThrow(/needs Node\.js 20 or newer \(found Node\.js 18\.19\.0\)/);
    await expect(checkNodeVersion(process.execPath)).resolves.toBeUndefined();
  });
});
