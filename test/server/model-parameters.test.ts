/**
 * The model a person picks is the model Cursor runs (docs/protocol.md §6.1, docs/clients.md "Choosing a model"):
 * through chat, messages and responses, streamed and not, `[[emu:echo-model]]` shows the base model, parameters and
 * max mode the bridge sent, with no model_details and only the client's tools allowed; a value the model lacks is a
 * 400 before any Run; the response names the variant that ran.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pngImage } from "../support/images.js";
import { type Stack, startStack } from "../support/stack.js";

let stack: Stack;
let native: Stack;
const lines: string[] = [];
beforeAll(async () => {
  stack = await startStack({ logLines: lines });
  native = await startStack({ cursorTools: "native" });
});
afterAll(async () => {
  await stack?.close();
  await native?.close();
});

type Json = Record<string, unknown>;

async function post(target: Stack, path: string, body: Json): Promise<Response> {
  return fetch(`${target.baseURL}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer local", "anthropic-version": "2023-06-01" },
    body: JSON.stringify(body),
  });
}

/** Every text the answer carries (a JSON body, or the deltas of an SSE body), and the model it names. */
async function answer(response: Response): Promise<{ text: string; models: string[] }> {
  const raw = await response.text();
  const payloads: Json[] = raw.startsWith("{")
    ? [JSON.parse(raw) as Json]
    : raw
        .split("\n")
        .filter((line) => line.startsWith("data: ") && line !== "data: [DONE]")
        .map((line) => JSON.parse(line.slice(6)) as Json);
  let text = "";
  const models: string[] = [];
  const visit = (value: unknown, key?: string): void => {
    if (Array.isArray(value)) for (const item of value) visit(item);
    else if (value !== null && typeof value === "object") {
      for (const [k, v] of Object.entries(value)) visit(v, k);
    } else if (typeof value === "string") {
      if (key === "model") models.push(value);
      if (key === "content" || key === "text" || key === "delta") text += value;
    }
  };
  for (const payload of payloads) {
    if (payload.type === "response.completed" || payload.type === "response.output_text.done") continue;
    if (payload.type === "content_block_delta" || payload.type === "response.output_text.delta") {
      const delta = payload.delta as Json | string;
      text += typeof delta === "string" ? delta : String((delta as Json).text ?? "");
      continue;
    }
    if (payload.type !== undefined && String(payload.type).startsWith("response.") && payload.response === undefined) {
      continue;
    }
    visit(payload);
  }
  return { text, models };
}

interface Door {
  name: string;
  path: string;
  body(model: string, text: string, extra: Json, stream: boolean): Json;
}

const DOORS: Door[] = [
  {
    name: "chat",
    path: "/chat/completions",
    body: (model, text, extra, stream) => ({ model, messages: [{ role: "user", content: text }], stream, ...extra }),
  },
  {
    name: "messages",
    path: "/messages",
    body: (model, text, extra, stream) => ({
      model,
      max_tokens: 1024,
      messages: [{ role: "user", content: text }],
      stream,
      ...extra,
    }),
  },
  {
    name: "responses",
    path: "/responses",
    body: (model, text, extra, stream) => ({ model, input: text, stream, store: false, ...extra }),
  },
];

/** The per-door way to say "effort high". */
const HIGH: Record<string, Json> = {
  chat: { reasoning_effort: "high" },
  messages: { output_config: { effort: "high" } },
  responses: { reasoning: { effort: "high" } },
};

const ECHO = "[[emu:echo-model]]";
const line = (model: string, params: string, maxMode: boolean, allowed = "mcp_tool_call") =>
  `Model: ${model}; params: ${params}; max_mode: ${maxMode}; model_details: none; allowed tools: ${allowed}`;

describe.each(DOORS)("$name", (door) => {
  describe.each([false, true])("stream: %s", (stream) => {
    const echo = async (model: string, extra: Json = {}) => {
      const response = await post(stack, door.path, door.body(model, ECHO, extra, stream));
      expect(response.status).toBe(200);
      return answer(response);
    };

    it("an effort tier on a gpt model becomes reasoning, with fast=false", async () => {
      const { text, models } = await echo("gpt-5.5", HIGH[door.name] ?? {});
      expect(text).toContain(line("gpt-5.5", "fast=false,reasoning=high", false));
      expect(models).toContain("gpt-5.5-high");
    });

    it("a variant id selects its base and values", async () => {
      const { text, models } = await echo("claude-opus-4-8-thinking-low");
      expect(text).toContain(line("claude-opus-4-8", "context=300k,effort=low,thinking=true", false));
      expect(models).toContain("claude-opus-4-8-thinking-low");
    });

    it("a 1m context variant is sent with max_mode", async () => {
      const { text } = await echo("claude-opus-4-8-thinking-high-1m");
      expect(text).toContain(line("claude-opus-4-8", "context=1m,effort=high,thinking=true", true));
    });

    it("a mistyped variant id of a Claude base is a 404 naming it, not the base's defaults", async () => {
      const before = stack.emulator.stats().turns.length;
      const response = await post(stack, door.path, door.body("claude-opus-4-8-thinking-hihg", ECHO, {}, stream));
      expect(response.status).toBe(404);
      const body = (await response.json()) as { error: { type: string; message: string } };
      expect(body.error.type).toBe("not_found_error");
      expect(body.error.message).toContain("`claude-opus-4-8-thinking-hihg` does not exist");
      expect(stack.emulator.stats().turns.length).toBe(before);
    });

    it("a value the model lacks is a 400 naming the allowed values, and no Run is sent", async () => {
      const before = stack.emulator.stats().turns.length;
      const response = await post(stack, door.path, door.body("gpt-5.5-max", ECHO, {}, stream));
      expect(response.status).toBe(400);
      const body = (await response.json()) as { error: { message: string } };
      expect(body.error.message).toContain("allowed values: none, low, medium, high, extra-high");
      expect(stack.emulator.stats().turns.length).toBe(before);
    });
  });
});

describe("effort max on the OpenAI doors", () => {
  // OpenAI has no `max`, Cursor's Claude Opus, GPT-5.6 and Kimi do: Codex and OpenCode pass it as written.
  const MAX: Record<string, Json> = { chat: { reasoning_effort: "max" }, responses: { reasoning: { effort: "max" } } };
  it.each(DOORS.filter((door) => door.name !== "messages"))(
    "$name: reaches Cursor as the model's max",
    async (door) => {
      const echo = async (model: string) => {
        const response = await post(stack, door.path, door.body(model, ECHO, MAX[door.name] ?? {}, false));
        expect(response.status).toBe(200);
        return answer(response);
      };
      const opus = await echo("claude-opus-4-8");
      expect(opus.text).toContain(line("claude-opus-4-8", "context=300k,effort=max,thinking=true", false));
      expect(opus.models).toContain("claude-opus-4-8-thinking-max");
      // A model topping at extra-high runs that.
      expect((await echo("gpt-5.5")).text).toContain(line("gpt-5.5", "fast=false,reasoning=extra-high", false));
    },
  );
});

describe("messages: thinking", () => {
  it("a budget of 20000 tokens on a claude model is thinking=true, effort=high", async () => {
    const body = {
      model: "claude-opus-4-8",
      max_tokens: 32_000,
      thinking: { type: "enabled", budget_tokens: 20_000 },
      messages: [{ role: "user", content: ECHO }],
    };
    const { text, models } = await answer(await post(stack, "/messages", body));
    expect(text).toContain(line("claude-opus-4-8", "context=300k,effort=high,thinking=true", false));
    expect(models).toContain("claude-opus-4-8-thinking-high");
  });
});

describe("messages: Claude Code's 1M context", () => {
  // Claude Code sends a model picked as `claude-sonnet-4-6[1m]` without the suffix and asks for 1M in the header.
  const send = (beta: string) =>
    fetch(`${stack.baseURL}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "anthropic-version": "2023-06-01", "anthropic-beta": beta },
      body: JSON.stringify({ model: "claude-opus-4-8", max_tokens: 1024, messages: [{ role: "user", content: ECHO }] }),
    });

  it("anthropic-beta context-1m-* selects the 1m context tier in Max mode", async () => {
    const response = await send("claude-code-20250219,context-1m-2025-08-07,interleaved-thinking-2025-05-14");
    expect(response.status).toBe(200);
    const { text, models } = await answer(response);
    expect(text).toContain(line("claude-opus-4-8", "context=1m,effort=high,thinking=true", true));
    expect(models).toContain("claude-opus-4-8-thinking-high-1m");
  });

  it("without it the model's default context is sent", async () => {
    const { text } = await answer(await send("claude-code-20250219"));
    expect(text).toContain(line("claude-opus-4-8", "context=300k,effort=high,thinking=true", false));
  });

  it("is left out where the model has no 1m tier, as Anthropic does (Claude Code sends it on every request)", async () => {
    const long = {
      "content-type": "application/json",
      "anthropic-version": "2023-06-01",
      "anthropic-beta": "context-1m-2025-08-07",
    };
    for (const [model, sent] of [
      ["claude-4.5-sonnet", line("claude-4.5-sonnet", "none", false)],
      ["claude-haiku-4-5", line("claude-haiku-4-5", "thinking=false", false)],
    ] as const) {
      const response = await fetch(`${stack.baseURL}/messages`, {
        method: "POST",
        headers: long,
        body: JSON.stringify({ model, max_tokens: 64, messages: [{ role: "user", content: ECHO }] }),
      });
      expect(response.status, model).toBe(200);
      expect((await answer(response)).text, model).toContain(sent);
    }
  });
});

describe("Claude ids name a version", () => {
  // Cursor lists claude-4.5-sonnet and claude-4.5-sonnet-thinking beside the newer claude-sonnet-5.
  it.each(DOORS)("$name: a version Cursor lists is that model; another one is the family's newest", async (door) => {
    const model = async (id: string, extra: Json = {}) => {
      const response = await post(stack, door.path, door.body(id, ECHO, extra, false));
      expect(response.status).toBe(200);
      return (await answer(response)).text;
    };
    // (The OpenAI doors ask for reasoning unless reasoning_effort is none, so they take the thinking model.)
    expect(await model("claude-sonnet-4-5-20250929")).toMatch(/Model: claude-4\.5-sonnet(-thinking)?; params: none;/);
    expect(await model("claude-opus-4-6")).toContain("Model: claude-4.6-opus-high; params: none;");
    expect(await model("claude-sonnet-4-7")).toContain("Model: claude-sonnet-5; params: context=300k,");
  });

  it("thinking picks the thinking model of that version (Claude Code's claude-sonnet-4-5)", async () => {
    const body = {
      model: "claude-sonnet-4-5",
      max_tokens: 32_000,
      thinking: { type: "enabled", budget_tokens: 31_999 },
      messages: [{ role: "user", content: ECHO }],
    };
    const { text } = await answer(await post(stack, "/messages", body));
    expect(text).toContain("Model: claude-4.5-sonnet-thinking; params: none;");
  });
});

describe("a flat id with an effort tier", () => {
  // gpt-5.3-codex is listed flat (no parameters) beside its tier ids gpt-5.3-codex-high, -xhigh-fast…
  it.each(DOORS.filter((door) => door.name !== "messages"))(
    "$name: runs the listed sibling of that tier",
    async (door) => {
      const effort = (tier: string): Json =>
        door.name === "chat" ? { reasoning_effort: tier } : { reasoning: { effort: tier } };
      const echo = async (model: string, tier: string) => {
        const response = await post(stack, door.path, door.body(model, ECHO, effort(tier), false));
        expect(response.status).toBe(200);
        return answer(response);
      };
      const high = await echo("gpt-5.3-codex", "high");
      expect(high.text).toContain(line("gpt-5.3-codex-high", "none", false));
      expect(high.models).toContain("gpt-5.3-codex-high");
      expect((await echo("gpt-5.3-codex-fast", "xhigh")).text).toContain(
        line("gpt-5.3-codex-xhigh-fast", "none", false),
      );
      // An id that names its tier wins; a tier without a listed sibling leaves the id as it is.
      expect((await echo("gpt-5.3-codex-high", "low")).text).toContain(line("gpt-5.3-codex-high", "none", false));
      expect((await echo("gpt-5.2", "low")).text).toContain(line("gpt-5.2", "none", false));
    },
  );
});

describe("GET /v1/models round trip", () => {
  it("every listed variant id selects exactly its listed values, and takes images where its base does", async () => {
    type Entry = {
      id: string;
      vision: boolean;
      cursor_bridge?: { base: string; params?: Record<string, string>; max_mode?: boolean };
    };
    const list = (await (await fetch(`${stack.baseURL}/models`)).json()) as { data: Entry[] };
    const bases = new Map(list.data.filter((m) => m.cursor_bridge?.params === undefined).map((m) => [m.id, m]));
    const variants = list.data.filter((m) => m.cursor_bridge?.params !== undefined);
    expect(variants.length).toBeGreaterThan(50);
    const image = pngImage(2, 2).toString("base64");
    for (const variant of variants) {
      const { base, params = {}, max_mode: maxMode = false } = variant.cursor_bridge ?? { base: "" };
      // `cursor-grok-4.6-high` and its alias `grok-4.6-high`: the family table alone says no images for the first.
      expect(variant.vision, variant.id).toBe(bases.get(base)?.vision);
      const content = variant.vision
        ? [
            { type: "text", text: ECHO },
            { type: "image_url", image_url: { url: `data:image/png;base64,${image}` } },
          ]
        : ECHO;
      const response = await post(stack, "/chat/completions", {
        model: variant.id,
        messages: [{ role: "user", content }],
      });
      expect(response.status, variant.id).toBe(200);
      const { text } = await answer(response);
      const sorted = Object.entries(params)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([id, value]) => `${id}=${value}`)
        .join(",");
      expect(text, variant.id).toContain(line(base, sorted, maxMode));
    }
  }, 120_000);
});

describe("allowed tools", () => {
  it("adds web search when the request offers it", async () => {
    const body = {
      model: "gpt-5.5",
      messages: [{ role: "user", content: ECHO }],
      web_search_options: {},
    };
    const { text } = await answer(await post(stack, "/chat/completions", body));
    expect(text).toContain("allowed tools: mcp_tool_call,web_search_tool_call");
  });

  it("--cursor-tools native sends no header, and a native call still reaches the client through the redirect", async () => {
    const { text } = await answer(
      await post(native, "/chat/completions", { model: "gpt-5.5", messages: [{ role: "user", content: ECHO }] }),
    );
    expect(text).toContain("allowed tools: none");
    const tools = [
      {
        type: "function",
        function: {
          name: "bash",
          description: "Run a shell command",
          parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
        },
      },
    ];
    const response = await post(native, "/chat/completions", {
      model: "gpt-5.5",
      messages: [{ role: "user", content: '[[emu:native shell {"command":"echo hi"}]]' }],
      tools,
    });
    const completion = (await response.json()) as {
      choices: { message: { tool_calls?: { function: { name: string; arguments: string } }[] } }[];
    };
    const call = completion.choices[0]?.message.tool_calls?.[0];
    expect(call?.function.name).toBe("bash");
    expect(call?.function.arguments).toContain("echo hi");
  });

  it("with the header, a native directive is refused instead", async () => {
    const { text } = await answer(
      await post(stack, "/chat/completions", {
        model: "gpt-5.5",
        messages: [{ role: "user", content: '[[emu:native shell {"command":"echo hi"}]]' }],
      }),
    );
    expect(text).toContain("Directive refused: shell is not an allowed tool");
  });
});

describe("GET /v1/models", () => {
  it("lists base and variant ids with the cursor_bridge extension object", async () => {
    const response = await fetch(`${stack.baseURL}/models`, { headers: { authorization: "Bearer local" } });
    const { data } = (await response.json()) as { data: (Json & { id: string; cursor_bridge?: Json })[] };
    const byId = new Map(data.map((model) => [model.id, model]));
    expect(byId.get("claude-opus-4-8")?.cursor_bridge).toEqual({
      base: "claude-opus-4-8",
      parameters: [
        { id: "thinking", values: ["false", "true"] },
        { id: "context", values: ["300k", "1m"] },
        { id: "effort", values: ["low", "medium", "high", "xhigh", "max"] },
      ],
      context_window: 300_000,
      default_variant: "claude-opus-4-8-thinking-high",
    });
    expect(byId.get("claude-opus-4-8-thinking-high-1m")).toMatchObject({
      context_window: 1_000_000,
      cursor_bridge: {
        base: "claude-opus-4-8",
        params: { thinking: "true", context: "1m", effort: "high" },
        max_mode: true,
      },
    });
    // A flat id whose base has another name (the catalogue's legacy slug), and a model without parameters.
    expect(byId.get("cursor-grok-4.6-high")?.cursor_bridge).toMatchObject({ base: "grok-4.6" });
    expect(byId.get("composer-1")?.cursor_bridge).toBeUndefined();
  });
});

describe("the log line", () => {
  it("names the variant that ran and the parameters sent", async () => {
    const response = await post(stack, "/chat/completions", {
      model: "gpt-5.5",
      reasoning_effort: "low",
      messages: [{ role: "user", content: "hi" }],
    });
    await response.text();
    const access = lines.filter((line) => line.includes("POST /v1/chat/completions 200")).at(-1) ?? "";
    expect(access).toMatch(/ model=gpt-5\.5-low /);
    expect(access, access).toContain(` params="fast=false,reasoning=low" `);
  });
});
