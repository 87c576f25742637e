/**
 * Model aliases, once for all doors (issue #23): an alias from the config file (or the environment, or
 * `--model-alias`) is resolved the same way on chat, messages and responses, each answer names the Cursor model that
 * served, and /v1/models lists the aliases with what they resolve to (in both of its shapes).
 */

import type { MiddlewareHandler } from "hono";
import { describe, expect, it } from "vitest";
import { parseCommandLine } from "../../src/cli/args.js";
import { loadConfig } from "../../src/config/index.js";
import type { AppEnv } from "../../src/surfaces/kit/access-log.js";
import type { Principal } from "../../src/surfaces/kit/principal.js";
import { ProxyError } from "../../src/util/errors.js";
import { appWithRecorder, HTTP_DOORS, post } from "./doors.js";

const paths = { env: {}, platform: "linux" as const, homedir: "/home/ana" };

function aliasesFromConfigFile(): readonly string[] {
  const config = loadConfig({
    ...paths,
    file: {
      path: "/etc/cursor-bridge.json",
      data: { modelAliases: { "gpt-4o": "gpt-5.2", sonnet: "claude-4.5-sonnet" } },
    },
  });
  return config.modelAliases;
}

describe("model aliases in the configuration", () => {
  it("come from the config file (object or list), the environment and repeated --model-alias flags", () => {
    expect(aliasesFromConfigFile()).toEqual(["gpt-4o=gpt-5.2", "sonnet=claude-4.5-sonnet"]);
    const list = loadConfig({ ...paths, file: { path: "/c.json", data: { modelAliases: ["a=gpt-5.2"] } } });
    expect(list.modelAliases).toEqual(["a=gpt-5.2"]);
    const env = loadConfig({
      ...paths,
      env: { CURSOR_BRIDGE_MODEL_ALIASES: "gpt-4o=gpt-5.2, sonnet=claude-4.5-sonnet" },
    });
    expect(env.modelAliases).toEqual(["gpt-4o=gpt-5.2", "sonnet=claude-4.5-sonnet"]);
    const argv = ["--model-alias", "x=gpt-5.2", "--model-alias", "y=default"];
    const flags = loadConfig({ ...paths, flags: parseCommandLine("serve", argv).flags.config });
    expect(flags.modelAliases).toEqual(["x=gpt-5.2", "y=default"]);
  });

  it("refuse an entry that is not NAME=ID, naming the setting and its source", () => {
    expect(() => loadConfig({ ...paths, env: { CURSOR_BRIDGE_MODEL_ALIASES: "gpt-4o" } })).toThrow(
      /modelAliases \(from env CURSOR_BRIDGE_MODEL_ALIASES\): expected NAME=ID/,
    );
  });
});

describe.each(HTTP_DOORS.map((door) => [door.name, door] as const))("an alias on the %s door", (_name, door) => {
  it("reaches Cursor as its model, and the answer names the model that served", async () => {
    const { app, runs } = appWithRecorder({ modelAliases: aliasesFromConfigFile() });
    const response = await app.request(door.path, post(door.basic("GPT-4o")));
    expect(response.status).toBe(200);
    expect(runs.map((run) => run.model)).toEqual(["gpt-5.2"]);
    expect(((await response.json()) as { model: string }).model).toBe("gpt-5.2");
  });

  it("names the served model in a streamed answer too", async () => {
    const { app, runs } = appWithRecorder({ modelAliases: aliasesFromConfigFile() });
    const response = await app.request(door.path, post({ ...door.basic("sonnet"), stream: true }));
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(runs.map((run) => run.model)).toEqual(["claude-4.5-sonnet"]);
    expect(text).toContain('"model":"claude-4.5-sonnet"');
    expect(text).not.toContain('"model":"sonnet"');
  });
});

describe("/v1/models", () => {
  it("lists each alias with what it resolves to, and serves it by id", async () => {
    const { app } = appWithRecorder({ modelAliases: aliasesFromConfigFile() });
    const list = (await (await app.request("/v1/models")).json()) as {
      data: Array<{ id: string; resolves_to?: string; display_name: string }>;
    };
    expect(list.data.find((m) => m.id === "gpt-4o")).toMatchObject({ resolves_to: "gpt-5.2", display_name: "GPT-5.2" });
    expect(list.data.find((m) => m.id === "sonnet")).toMatchObject({ resolves_to: "claude-4.5-sonnet" });
    expect(list.data.find((m) => m.id === "gpt-5.2")?.resolves_to).toBeUndefined();
    const one = (await (await app.request("/v1/models/gpt-4o")).json()) as { id: string; resolves_to: string };
    expect(one).toMatchObject({ id: "gpt-4o", resolves_to: "gpt-5.2" });
  });

  it("lists an alias whose target Cursor does not list with bare facts, and a request for it is a 404", async () => {
    const { app, runs } = appWithRecorder({ modelAliases: ["old=gpt-4-turbo"] });
    const list = (await (await app.request("/v1/models")).json()) as { data: Array<Record<string, unknown>> };
    expect(list.data.find((m) => m.id === "old")).toMatchObject({
      resolves_to: "gpt-4-turbo",
      display_name: "gpt-4-turbo",
    });
    const response = await app.request("/v1/chat/completions", post(HTTP_DOORS[0]?.basic("old")));
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain("gpt-4-turbo");
    expect(runs).toHaveLength(0);
  });

  it("lists them in Anthropic's shape for Anthropic clients", async () => {
    const { app } = appWithRecorder({ modelAliases: aliasesFromConfigFile() });
    const response = await app.request("/v1/models", { headers: { "anthropic-version": "2023-06-01" } });
    const list = (await response.json()) as { data: Array<{ type: string; id: string; display_name: string }> };
    expect(list.data.find((m) => m.id === "sonnet")).toEqual({
      type: "model",
      id: "sonnet",
      display_name: "sonnet → claude-4.5-sonnet",
      created_at: expect.any(String),
      max_input_tokens: 200_000,
    });
  });

  it("lists to a virtual key limited to some models only the aliases it may use, in both shapes", async () => {
    const principal: Principal = {
      keyId: "k1",
      keyName: "kit",
      limits: {},
      checkModel: (_requested, resolved) => {
        if (!resolved.startsWith("composer-")) throw new ProxyError("permission_denied", `not ${resolved}`);
      },
    };
    const auth: MiddlewareHandler<AppEnv> = async (c, next) => {
      c.set("principal", principal);
      await next();
    };
    const { app } = appWithRecorder(
      { modelAliases: ["fast=composer-1", "smart=claude-4.5-sonnet"] },
      undefined,
      undefined,
      {
        auth,
      },
    );
    const openai = (await (await app.request("/v1/models")).json()) as { data: Array<{ id: string }> };
    const headers = { "anthropic-version": "2023-06-01" };
    const anthropic = (await (await app.request("/v1/models", { headers })).json()) as { data: Array<{ id: string }> };
    for (const list of [openai, anthropic]) {
      const ids = list.data.map((model) => model.id);
      expect(ids).toContain("fast");
      expect(ids).not.toContain("smart");
    }
  });

  it("keeps --anthropic-models working on every door, folded into the same resolution", async () => {
    for (const door of HTTP_DOORS) {
      const { app, runs } = appWithRecorder({ anthropicModels: ["sonnet=gpt-5.2"] });
      const response = await app.request(door.path, post(door.basic("claude-sonnet-4-5-20250929")));
      expect(response.status, door.name).toBe(200);
      expect(
        runs.map((run) => run.model),
        door.name,
      ).toEqual(["gpt-5.2"]);
    }
  });
});
