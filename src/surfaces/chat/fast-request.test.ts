import { describe, expect, it } from "vitest";
import { fastChatRequest } from "./fast-request.js";
import { chatCompletionRequestSchema } from "./request.js";

/** Bodies real clients send, each valid. */
const VALID: Record<string, unknown>[] = [
  { model: "auto", messages: [{ role: "user", content: "hi" }], stream: true },
  { model: "auto", messages: [{ role: "user", content: "hi" }], stream: true, stream_options: { include_usage: true } },
  {
    model: "gpt-5",
    temperature: 0.2,
    messages: [
      { role: "system", content: "be brief" },
      { role: "developer", content: [{ type: "text", text: "rules" }], name: "dev" },
      {
        role: "user",
        content: [
          { text: "look", type: "text", cache_control: { type: "ephemeral" } },
          { type: "image_url", image_url: { url: "data:image/png;base64,AAAA", detail: "low" } },
          { type: "image_url", image_url: { url: "https://x/y.png" }, extra: 1 },
        ],
        name: "me",
      },
      {
        content: null,
        role: "assistant",
        tool_calls: [
          { function: { arguments: '{"a":1}', name: "read" }, id: "call_1", type: "function" },
          { id: "call_2", function: { name: "write", arguments: "{}", extra: true } },
        ],
        reasoning_content: "thought",
      },
      { role: "tool", tool_call_id: "call_1", content: "ok" },
      { role: "tool", content: [{ type: "text", text: "done" }], tool_call_id: "call_2" },
      {
        role: "assistant",
        content: [
          { type: "refusal", refusal: "no" },
          { type: "text", text: "but" },
        ],
      },
      { role: "assistant", content: "plain", tool_calls: null, name: "bot" },
      { role: "assistant" },
      { role: "user", content: [] },
    ],
    tools: [
      {
        type: "function",
        function: {
          name: "read",
          description: "Reads",
          parameters: { $schema: "x", type: "object", properties: { a: { type: "number" } }, "1": 2 },
          strict: true,
        },
      },
      { function: { name: "write", parameters: null, description: null, strict: null }, type: "function", x: 1 },
      { type: "function", function: { name: "noop" } },
    ],
    tool_choice: "required",
    parallel_tool_calls: false,
    n: 1,
    max_tokens: 100,
    max_completion_tokens: 200,
    reasoning_effort: "high",
    user: "u",
    metadata: null,
    response_format: null,
    stop: ["a", "b"],
    web_search_options: null,
    seed: 4,
    "2": "numeric key",
  },
  { messages: [{ role: "user", content: "x" }], model: "m", stop: "END", tool_choice: null, tools: null, n: null },
  // Every parameter checked but ignored (request.ts `ignoredFields`), as SDKs send them: still the fast path's.
  {
    model: "gpt-4o",
    messages: [{ role: "user", content: "hi" }],
    temperature: 2,
    top_p: 0,
    frequency_penalty: -2,
    presence_penalty: 1.5,
    seed: 2 ** 62,
    logit_bias: { "50256": -100, "11": 2.5 },
    logprobs: true,
    top_logprobs: 20,
    store: false,
    service_tier: "auto",
    prompt_cache_key: "k",
    safety_identifier: "s",
    verbosity: "low",
    modalities: ["text"],
    audio: { voice: "alloy", format: "mp3" },
    prediction: { type: "content", content: "x" },
    functions: [{ name: "f", parameters: { type: "object" } }],
    function_call: { name: "f" },
  },
  {
    model: "m",
    messages: [{ role: "user", content: "x" }],
    temperature: null,
    top_p: null,
    frequency_penalty: null,
    presence_penalty: null,
    seed: null,
    logit_bias: null,
    logprobs: null,
    top_logprobs: null,
    store: null,
    modalities: null,
    function_call: "auto",
  },
];

/** Values put at every path of the valid bodies (each also deleted, and given a sibling). */
const VARIANTS: unknown[] = [
  null,
  0,
  -1,
  1.5,
  2 ** 60,
  "",
  "x",
  "auto",
  "function",
  "text",
  "user",
  "assistant",
  "tool",
  "high",
  "bogus",
  "a".repeat(300),
  true,
  false,
  [],
  [1],
  ["s"],
  [{}],
  {},
  { a: 1 },
  { type: "text" },
  { type: "text", text: "t" },
  { type: "image_url", image_url: { url: "u" } },
  { type: "refusal", refusal: "r" },
  { type: "input_audio", input_audio: {} },
  { role: "user", content: "c" },
  { type: "function", function: { name: "f" } },
  JSON.parse('{"__proto__": {"x": 1}, "type": "text", "text": "t"}'),
];

type Path = (string | number)[];

function paths(value: unknown, prefix: Path = []): Path[] {
  const out: Path[] = [prefix];
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) out.push(...paths(v, [...prefix, i]));
  } else if (typeof value === "object" && value !== null) {
    for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...prefix, k]));
  }
  return out;
}

function mutate(
  body: unknown,
  path: Path,
  change: (parent: Record<string | number, unknown>, key: string | number) => void,
) {
  const copy = structuredClone(body) as Record<string | number, unknown>;
  if (path.length === 0) return copy;
  let parent = copy;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  change(parent, path.at(-1) as string | number);
  return copy;
}

/** Every body: the valid ones, and each with one value changed, removed or given a sibling. */
function corpus(): unknown[] {
  const bodies: unknown[] = [...VALID, null, [], "x", {}, { model: "m" }, { messages: [] }];
  for (const body of VALID) {
    for (const path of paths(body)) {
      if (path.length === 0) continue;
      for (const variant of VARIANTS) bodies.push(mutate(body, path, (p, k) => (p[k] = structuredClone(variant))));
      bodies.push(
        mutate(body, path, (p, k) => {
          if (Array.isArray(p)) p.splice(k as number, 1);
          else delete p[k];
        }),
      );
      bodies.push(
        mutate(body, path, (p) => {
          if (!Array.isArray(p)) p.zz_extra = { keep: true };
        }),
      );
    }
  }
  // A few keys the fast path leaves to the schema: still the same outcome either way.
  for (const [key, value] of Object.entries({
    metadata: { a: "b" },
    response_format: { type: "json_object" },
    web_search_options: {},
    tool_choice: { type: "function", function: { name: "read" } },
  })) {
    bodies.push({ ...(VALID[0] as object), [key]: value });
  }
  return bodies;
}

describe("fastChatRequest", () => {
  it("returns exactly what the schema returns, or leaves the body to the schema", () => {
    let fast = 0;
    let total = 0;
    for (const body of corpus()) {
      total++;
      const schema = chatCompletionRequestSchema.safeParse(structuredClone(body));
      const quick = fastChatRequest(structuredClone(body));
      if (quick === undefined) continue;
      fast++;
      // Accepted by the fast path ⇒ accepted by the schema, with the same value and the same key order.
      expect(schema.success, JSON.stringify(body)).toBe(true);
      expect(quick).toStrictEqual(schema.data);
      expect(JSON.stringify(quick)).toBe(JSON.stringify(schema.data));
    }
    // Not vacuous: most bodies are decided by the fast path, valid ones included.
    expect(total).toBeGreaterThan(3000);
    expect(fast).toBeGreaterThan(total / 4);
  });

  it("takes the common valid shapes itself", () => {
    for (const body of VALID) expect(fastChatRequest(structuredClone(body)), JSON.stringify(body)).toBeDefined();
  });

  it("leaves a wrongly typed ignored parameter to the schema, which refuses it", () => {
    const base = VALID[0] as object;
    for (const extra of [
      { temperature: "hot" },
      { temperature: 2.5 },
      { top_p: -0.1 },
      { presence_penalty: 3 },
      { seed: "x" },
      { seed: 1.5 },
      { logit_bias: { "1": "x" } },
      { logit_bias: [] },
      { top_logprobs: 21 },
      { logprobs: "yes" },
      { store: 1 },
      { service_tier: 0 },
      { modalities: "text" },
      { audio: "alloy" },
      { functions: {} },
      { function_call: 1 },
    ]) {
      const body = { ...base, ...extra };
      expect(fastChatRequest(structuredClone(body)), JSON.stringify(extra)).toBeUndefined();
      expect(chatCompletionRequestSchema.safeParse(body).success, JSON.stringify(extra)).toBe(false);
    }
  });

  it("returns new objects: the body is not aliased", () => {
    const body = structuredClone(VALID[2]) as { messages: object[]; tools: { function: { parameters: object } }[] };
    const quick = fastChatRequest(body) as unknown as typeof body;
    expect(quick).not.toBe(body);
    expect(quick.messages[0]).not.toBe(body.messages[0]);
    expect(quick.tools[0]?.function.parameters).not.toBe(body.tools[0]?.function.parameters);
  });
});
