/**
 * Errors by kind on every door, the three HTTP doors and ACP, against the emulator (cursor-protocol-addendum-3.md E2,
 * T7): Cursor's bare `resource_exhausted` on a request of at least half the model's window is a context overflow in
 * each door's "too long" wording (what OpenCode and Claude Code compact on), on a small request a model the plan
 * cannot use (403 naming the model; ACP: -32013); a stream that ends without `turn_ended` is `upstream_truncated`
 * (502, or an error event when streaming; ACP: the prompt's -32015 error), with a tool call open or not, never a
 * success and never a hang. ACP runs on the same engine and emulator, driven by the ACP client SDK (acp-door.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../support/stack.js";
import { type AcpAnswer, promptOverAcp } from "./acp-door.js";

let s: Stack;
beforeAll(async () => {
  s = await startStack();
});
afterAll(async () => {
  await s.close();
});

/** About 120k estimated tokens: over half of the 200k window Claude and unknown families get. */
const LONG = "lorem ipsum dolor ".repeat(27_000);
const MODEL = "claude-4.5-sonnet";

type Door = "chat" | "responses" | "messages";

function post(door: Door, text: string, options: { stream?: boolean; tools?: boolean } = {}): Promise<Response> {
  const stream = options.stream === true;
  const fn = { name: "lookup", description: "Looks up.", schema: { type: "object", properties: {} } };
  const body =
    door === "chat"
      ? {
          model: MODEL,
          stream,
          messages: [{ role: "user", content: text }],
          ...(options.tools
            ? {
                tools: [
                  { type: "function", function: { name: fn.name, description: fn.description, parameters: fn.schema } },
                ],
              }
            : {}),
        }
      : door === "responses"
        ? {
            model: MODEL,
            stream,
            input: text,
            ...(options.tools
              ? { tools: [{ type: "function", name: fn.name, description: fn.description, parameters: fn.schema }] }
              : {}),
          }
        : {
            model: MODEL,
            stream,
            max_tokens: 1024,
            messages: [{ role: "user", content: text }],
            ...(options.tools
              ? { tools: [{ name: fn.name, description: fn.description, input_schema: fn.schema }] }
              : {}),
          };
  const path = { chat: "/v1/chat/completions", responses: "/v1/responses", messages: "/v1/messages" }[door];
  return fetch(`${s.server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body: JSON.stringify(body),
  });
}

const DOORS: Door[] = ["chat", "responses", "messages"];

/** ACP: a prompt to a new session on {@link MODEL}. */
const prompt = (text: string): Promise<AcpAnswer> =>
  promptOverAcp(s.engine, [{ type: "text", text }], { model: MODEL });

/**
 * A turn with a call open on ACP: its tools are the session's MCP servers' or Cursor's native ones, which the agent
 * runs through the editor, so the open call is a native exec rather than a declared client tool.
 */
const ACP_OPEN_CALL = '[[emu:native shell {"command":"make"}]] [[emu:truncate]]';

describe("context overflow and model not available ([[emu:overflow]])", () => {
  it.each(DOORS)("%s: a request over half the window gets the door's 'too long' error", async (door) => {
    const response = await post(door, `${LONG} [[emu:overflow]]`);
    expect(response.status).toBe(400);
    expect(response.headers.get("x-should-retry")).toBe("false");
    const body = (await response.json()) as { error: { type: string; code?: string; message: string } };
    if (door === "messages") {
      expect(body.error.type).toBe("invalid_request_error");
      expect(body.error.message).toMatch(/^prompt is too long: \d+ tokens > 200000 maximum$/);
    } else {
      expect(body.error.code).toBe("context_length_exceeded");
      expect(body.error.type).toBe("invalid_request_error");
      expect(body.error.message).toMatch(
        /^This model's maximum context length is 200000 tokens\. However, your messages resulted in \d+ tokens\./,
      );
    }
  });

  it.each(DOORS)("%s: a small request gets 403 naming the model, with a hint", async (door) => {
    const response = await post(door, "hi [[emu:overflow]]");
    expect(response.status).toBe(403);
    expect(response.headers.get("x-should-retry")).toBe("false");
    const body = (await response.json()) as { error: { type: string; code?: string; message: string } };
    expect(body.error.type).toBe("permission_error");
    expect(body.error.message).toContain(`The model ${MODEL} is not available`);
    expect(body.error.message).toContain("Pick another model");
    if (door !== "messages") expect(body.error.code).toBe("model_not_available");
  });
});

describe("context overflow and model not available on ACP ([[emu:overflow]])", () => {
  it("acp: a prompt over half the window gets -32010 saying the conversation is too long", async () => {
    const answer = await prompt(`${LONG} [[emu:overflow]]`);
    expect(answer.stopReason).toBeUndefined();
    expect(answer.error).toMatchObject({
      code: -32010,
      // The estimate (under the window) is no size to show: only the window is named.
      message: expect.stringMatching(
        /^The conversation is too long for the model's 200000-token context window\. Start a new session or run \/compact\.$/,
      ),
      data: { code: "context_length_exceeded", retryable: false },
    });
  });

  it("acp: a small prompt gets -32013 naming the model, with a hint", async () => {
    const answer = await prompt("hi [[emu:overflow]]");
    expect(answer.error).toMatchObject({
      code: -32013,
      message: expect.stringContaining(`The model ${MODEL} is not available`),
      data: { code: "permission_denied", retryable: false },
    });
    expect(answer.error?.message).toContain("Pick another model (the session's Model option lists them)");
    expect(answer.error?.message).not.toContain("/v1/models");
  });
});

describe("[[emu:overflow once]]: only the first request of the emulator process overflows", () => {
  it("answers the first request with the overflow and the same request again normally", async () => {
    const first = await post("chat", `${LONG} [[emu:overflow once]]`);
    expect(first.status).toBe(400);
    expect(((await first.json()) as { error: { code?: string } }).error.code).toBe("context_length_exceeded");
    const again = await post("chat", `${LONG} [[emu:overflow once]]`);
    expect(again.status).toBe(200);
    const body = (await again.json()) as { choices: { message: { content: string } }[] };
    expect(body.choices[0]?.message.content.length).toBeGreaterThan(0);
    // The plain form is unchanged: it still overflows every time.
    expect((await post("chat", `${LONG} [[emu:overflow]]`)).status).toBe(400);
  });
});

describe("a stream that ends without turn_ended ([[emu:truncate]])", () => {
  for (const tools of [false, true]) {
    const what = tools ? "a tool call open" : "text only";
    it.each(DOORS)(`%s non-streaming, ${what}: 502 upstream_truncated`, async (door) => {
      const text = tools ? "[[emu:tool lookup {}]] [[emu:truncate]]" : "tell me [[emu:truncate]]";
      const response = await post(door, text, { tools });
      expect(response.status).toBe(502);
      const body = (await response.json()) as { error: { code?: string; message: string } };
      if (door !== "messages") expect(body.error.code).toBe("upstream_truncated");
      expect(body.error.message).toContain("without finishing the turn");
    });

    it.each(DOORS)(
      `%s streaming, ${what}: an error (502 before any byte, else an error event), never a clean end`,
      async (door) => {
        const text = tools ? "[[emu:tool lookup {}]] [[emu:truncate]]" : "tell me [[emu:truncate]]";
        const response = await post(door, text, { stream: true, tools });
        const sse = await response.text();
        expect(sse).toContain("without finishing the turn");
        if (!(response.headers.get("content-type") ?? "").includes("text/event-stream")) {
          // Nothing had reached the client yet: the door answered the error itself.
          expect(response.status).toBe(502);
          return;
        }
        if (door === "chat") expect(sse).not.toContain("[DONE]");
        if (door === "responses") {
          expect(sse).toContain("upstream_truncated");
          expect(sse).not.toContain("response.completed");
        }
        if (door === "messages") {
          expect(sse).toContain("event: error");
          expect(sse).not.toContain("message_stop");
        }
      },
    );

    it(`acp, ${what}: the prompt ends with -32015 upstream_truncated, never a stop reason`, async () => {
      const answer = await prompt(tools ? ACP_OPEN_CALL : "tell me [[emu:truncate]]");
      expect(answer.stopReason).toBeUndefined();
      expect(answer.error).toMatchObject({
        code: -32015,
        message: expect.stringContaining("without finishing the turn"),
        data: { code: "backend_protocol", detail: "upstream_truncated", retryable: false },
      });
      if (tools) expect(answer.error?.message).toContain("while a tool call was open");
    });
  }
});

describe("a single user message over Cursor's ~1 MiB limit (cursor-protocol-addendum-3.md P14)", () => {
  /** 1.1 MB of text in one message: the service refuses it with `invalid_argument`, whatever the max mode. */
  const HUGE = "x".repeat(1_100_000);

  it.each(DOORS)("%s: Cursor's invalid_argument is a 400 saying so, never a success, a 5xx or a hang", async (door) => {
    const response = await post(door, HUGE);
    const body = (await response.json()) as { error?: { message?: string; type?: string } };
    expect(response.status).toBe(400);
    expect(body.error?.type).toBe("invalid_request_error");
    expect(body.error?.message).toContain("user message is too long");
  });
});
