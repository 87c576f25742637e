/**
 * Every field of ../shared/cursor-protocol-addendum-2.md that has a number and a type (plus the integer types issue
 * #24 corrects) decodes from a frame encoded by hand from the addendum's field numbers: a tiny tag/varint writer
 * below, not our generated code. Each frame is a whole AgentServerMessage / AgentClientMessage (or ErrorDetails),
 * must decode with no unknown field, and the value must land where the addendum says.
 */
import { fromBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { AgentClientMessageSchema, AgentServerMessageSchema } from "../../src/gen/agent/v1/agent_pb.js";
import { ErrorDetails_Error, ErrorDetailsSchema } from "../../src/gen/aiserver/v1/error_pb.js";
import { findUnknownFields } from "./proto-walk.js";

// --- a minimal protobuf writer: wire type 0 (varint) and 2 (length-delimited) are all these fields need ---
type Bytes = number[];
function varint(value: bigint | number): Bytes {
  let v = BigInt.asUintN(64, BigInt(value));
  const out: Bytes = [];
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return out;
}
/** A varint field (int32/int64/uint32/uint64/bool/enum). */
const num = (field: number, value: bigint | number | boolean): Bytes => [
  ...varint(field << 3),
  ...varint(typeof value === "boolean" ? (value ? 1 : 0) : value),
];
/** A length-delimited field holding bytes. */
const bytes = (field: number, data: Bytes): Bytes => [...varint((field << 3) | 2), ...varint(data.length), ...data];
/** A string field. */
const str = (field: number, text: string): Bytes => bytes(field, [...new TextEncoder().encode(text)]);
/** A message field built from its own fields. */
const msg = (field: number, ...children: Bytes[]): Bytes => bytes(field, children.flat());

interface Case {
  name: string;
  frame: Bytes;
  read: (decoded: never) => unknown;
  expected: unknown;
}

const server = (name: string, frame: Bytes, read: (m: never) => unknown, expected: unknown): Case => ({
  name: `AgentServerMessage ${name}`,
  frame,
  read,
  expected,
});

// biome-ignore lint/suspicious/noExplicitAny: decoded messages are navigated by the generated shapes below
type M = any;
const iu = (...children: Bytes[]) => msg(1, ...children);

const SERVER_CASES: Case[] = [
  // §3: TurnEndedUpdate = InteractionUpdate 14, five optional int64 counts.
  server(
    "turn_ended.input_tokens=1",
    iu(msg(14, num(1, 1201))),
    (m: M) => m.message.value.message.value.inputTokens,
    1201n,
  ),
  server(
    "turn_ended.output_tokens=2",
    iu(msg(14, num(2, 345))),
    (m: M) => m.message.value.message.value.outputTokens,
    345n,
  ),
  server(
    "turn_ended.cache_read_tokens=3",
    iu(msg(14, num(3, 800))),
    (m: M) => m.message.value.message.value.cacheReadTokens,
    800n,
  ),
  server(
    "turn_ended.cache_write_tokens=4",
    iu(msg(14, num(4, 64))),
    (m: M) => m.message.value.message.value.cacheWriteTokens,
    64n,
  ),
  server(
    "turn_ended.reasoning_tokens=5",
    iu(msg(14, num(5, 42))),
    (m: M) => m.message.value.message.value.reasoningTokens,
    42n,
  ),
  // §4
  server(
    "routed_model=24 .display_name=1",
    iu(msg(24, str(1, "Composer 1.5"))),
    (m: M) => [m.message.value.message.case, m.message.value.message.value.displayName],
    ["routedModel", "Composer 1.5"],
  ),
  server(
    "message_started_at_ms=25",
    iu(num(25, 1_767_000_000_123n)),
    (m: M) => m.message.value.messageStartedAtMs,
    1_767_000_000_123n,
  ),
  server(
    "text_delta.is_server_notice=2",
    iu(msg(1, str(1, "notice"), num(2, true))),
    (m: M) => m.message.value.message.value.isServerNotice,
    true,
  ),
  server(
    "tool_requests_listed=27 .call_count=1",
    iu(msg(27, num(1, 3))),
    (m: M) => [m.message.value.message.case, m.message.value.message.value.callCount],
    ["toolRequestsListed", 3],
  ),
  server("step_started=16 .step_id=1", iu(msg(16, num(1, 7))), (m: M) => m.message.value.message.value.stepId, 7n),
  server(
    "step_completed=17 .step_id=1 .step_duration_ms=2",
    iu(msg(17, num(1, 7), num(2, 1500))),
    (m: M) => [m.message.value.message.value.stepId, m.message.value.message.value.stepDurationMs],
    [7n, 1500n],
  ),
  // §6: ToolCall.tool_call_id = 57, started_at_ms = 59, completed_at_ms = 60 (inside tool_call_completed 3 .tool_call 2).
  server(
    "ToolCall.tool_call_id=57",
    iu(msg(3, msg(2, str(57, "toolu_1")))),
    (m: M) => m.message.value.message.value.toolCall.toolCallId,
    "toolu_1",
  ),
  server(
    "ToolCall.started_at_ms=59",
    iu(msg(3, msg(2, num(59, 1000)))),
    (m: M) => m.message.value.message.value.toolCall.startedAtMs,
    1000n,
  ),
  server(
    "ToolCall.completed_at_ms=60",
    iu(msg(3, msg(2, num(60, 2000)))),
    (m: M) => m.message.value.message.value.toolCall.completedAtMs,
    2000n,
  ),
  // §6: ShellArgs.parsing_result = 8 of the native shell exec (exec_server_message 2 .shell_args 2).
  server(
    "shell_args.parsing_result=8",
    msg(
      2,
      num(1, 1),
      msg(2, str(1, "ls -la"), msg(8, msg(2, str(1, "ls"), msg(2, str(1, "word"), str(2, "-la")), str(3, "ls -la")))),
    ),
    (m: M) => m.message.value.message.value.parsingResult.executableCommands[0].args[0].value,
    "-la",
  ),
  // §7: web_search_tool_call = 18 → result 2 .success 1 .references 1 {title 1, url 2, chunk 3}.
  server(
    "web_search_tool_call=18 references",
    iu(msg(3, msg(2, msg(18, msg(2, msg(1, msg(1, str(1, "T"), str(2, "https://a"), str(3, "C")))))))),
    (m: M) => m.message.value.message.value.toolCall.tool.value.result.result.value.references[0],
    expect.objectContaining({ title: "T", url: "https://a", chunk: "C" }),
  ),
  // §7: web_fetch_tool_call = 37 → result 2 .success 1 {url 1, markdown 2}.
  server(
    "web_fetch_tool_call=37 success",
    iu(msg(3, msg(2, msg(37, msg(2, msg(1, str(1, "https://b"), str(2, "# md"))))))),
    (m: M) => m.message.value.message.value.toolCall.tool.value.result.result.value,
    expect.objectContaining({ url: "https://b", markdown: "# md" }),
  ),
];

const run = (...children: Bytes[]) => msg(1, ...children);
const userAction = (...children: Bytes[]) => msg(4, msg(1, ...children));
const history = (...messages: Bytes[]) => userAction(msg(7, ...messages.map((m) => msg(1, m))));
const client = (name: string, frame: Bytes, read: (m: never) => unknown, expected: unknown): Case => ({
  name: `AgentClientMessage ${name}`,
  frame,
  read,
  expected,
});

const CLIENT_CASES: Case[] = [
  // §4, §5: AgentRunRequest fields.
  client(
    "run_request.client_supports_routed_model_update=28",
    run(num(28, true)),
    (m: M) => m.message.value.clientSupportsRoutedModelUpdate,
    true,
  ),
  client(
    "run_request.custom_system_prompt=8",
    run(str(8, "be brief")),
    (m: M) => m.message.value.customSystemPrompt,
    "be brief",
  ),
  client(
    "run_request.requested_model=9",
    run(msg(9, str(1, "composer-2"))),
    (m: M) => m.message.value.requestedModel.modelId,
    "composer-2",
  ),
  client("run_request.conversation_group_id=16", run(str(16, "g")), (m: M) => m.message.value.conversationGroupId, "g"),
  client(
    "run_request.client_supports_inline_images=19",
    run(num(19, true)),
    (m: M) => m.message.value.clientSupportsInlineImages,
    true,
  ),
  client("run_request.run_id=25", run(str(25, "r")), (m: M) => m.message.value.runId, "r"),
  client("run_request.agent_session_id=26", run(str(26, "s")), (m: M) => m.message.value.agentSessionId, "s"),
  client(
    "run_request.system_prompt_spec=29 .replace=1",
    run(msg(29, str(1, "R"))),
    (m: M) => m.message.value.systemPromptSpec.spec,
    { case: "replace", value: "R" },
  ),
  client(
    "run_request.system_prompt_spec=29 .append=2",
    run(msg(29, str(2, "A"))),
    (m: M) => m.message.value.systemPromptSpec.spec,
    { case: "append", value: "A" },
  ),
  // §5: UserMessageAction.conversation_history = 7.
  client(
    "conversation_history.replace_user_info=2",
    userAction(msg(7, num(2, true))),
    (m: M) => m.message.value.action.value.conversationHistory.replaceUserInfo,
    true,
  ),
  client(
    "history user text",
    history(msg(1, msg(1, msg(1, str(1, "hi"))))),
    (m: M) => m.message.value.action.value.conversationHistory.messages[0].message.value.content[0].content,
    expect.objectContaining({ case: "text", value: expect.objectContaining({ text: "hi" }) }),
  ),
  client(
    "history user image",
    history(msg(1, msg(1, msg(2, str(1, "aGk="), str(2, "image/png"))))),
    (m: M) => m.message.value.action.value.conversationHistory.messages[0].message.value.content[0].content.value,
    expect.objectContaining({ data: "aGk=", mimeType: "image/png" }),
  ),
  client(
    "history assistant text",
    history(msg(2, msg(1, msg(1, str(1, "ok"))))),
    (m: M) => m.message.value.action.value.conversationHistory.messages[0].message.value.content[0].content.value.text,
    "ok",
  ),
  client(
    "history assistant reasoning",
    history(msg(2, msg(1, msg(2, str(1, "hmm"), str(2, "sig"))))),
    (m: M) => m.message.value.action.value.conversationHistory.messages[0].message.value.content[0].content.value,
    expect.objectContaining({ text: "hmm", signature: "sig" }),
  ),
  client(
    "history assistant redacted_reasoning",
    history(msg(2, msg(1, msg(3, str(1, "xx"))))),
    (m: M) => m.message.value.action.value.conversationHistory.messages[0].message.value.content[0].content.value.data,
    "xx",
  ),
  client(
    "history assistant tool_call",
    history(msg(2, msg(1, msg(4, str(1, "c1"), str(2, "read"), str(3, "{}"))))),
    (m: M) => m.message.value.action.value.conversationHistory.messages[0].message.value.content[0].content.value,
    expect.objectContaining({ toolCallId: "c1", toolName: "read", argsJson: "{}" }),
  ),
  client(
    "history tool message",
    history(msg(3, str(1, "c1"), str(2, "read"), msg(3, msg(1, str(1, "out"))), num(4, true))),
    (m: M) => {
      const t = m.message.value.action.value.conversationHistory.messages[0].message.value;
      return [t.toolCallId, t.toolName, t.content[0].content.value.text, t.isError];
    },
    ["c1", "read", "out", true],
  ),
  // §5: CancelAction.reason = 1 (conversation_action 4 .cancel_action 3).
  client(
    "cancel_action.reason=1",
    msg(4, msg(3, str(1, "user_stopped_generation"))),
    (m: M) => m.message.value.action.value.reason,
    "user_stopped_generation",
  ),
  // §6: ExecClientThrow (exec_client_control_message 5 .throw 2).
  client(
    "throw {id, error, stack_trace, error_code}",
    msg(5, msg(2, num(1, 4), str(2, "boom"), str(3, "at x"), str(4, "EXEC_BACKEND_UNAVAILABLE"))),
    (m: M) => m.message.value.message.value,
    expect.objectContaining({ id: 4, error: "boom", stackTrace: "at x", errorCode: "EXEC_BACKEND_UNAVAILABLE" }),
  ),
  client(
    "exec_client_message.local_execution_time_ms=39",
    msg(2, num(1, 4), num(39, 12)),
    (m: M) => m.message.value.localExecutionTimeMs,
    12n,
  ),
  // §6: GetBlobResult { blob_data 1, error 2 { message 1 } } (kv_client_message 3 .get_blob_result 2).
  client(
    "get_blob_result.blob_data=1",
    msg(3, num(1, 2), msg(2, bytes(1, [1, 2, 3]))),
    (m: M) => [...m.message.value.message.value.blobData],
    [1, 2, 3],
  ),
  client(
    "get_blob_result.error=2 .message=1",
    msg(3, num(1, 2), msg(2, msg(2, str(1, "gone")))),
    (m: M) => m.message.value.message.value.error.message,
    "gone",
  ),
  // Integer types corrected by issue #24 (a negative int32 is a 10-byte varint; uint32 values above 2^31 stay positive).
  client(
    "ShellSuccess.ms_to_wait=12 int32",
    msg(2, num(1, 1), msg(2, msg(1, num(12, -1)))),
    (m: M) => m.message.value.message.value.result.value.msToWait,
    -1,
  ),
  client(
    "WriteShellStdinSuccess.terminal_file_length_before_input_written=2 uint32",
    msg(2, num(1, 1), msg(23, msg(1, num(1, 3), num(2, 3_000_000_000)))),
    (m: M) => m.message.value.message.value.result.value.terminalFileLengthBeforeInputWritten,
    3_000_000_000,
  ),
  client(
    "diagnostic Position.line/column uint32",
    msg(2, num(1, 1), msg(9, msg(1, msg(2, msg(2, msg(1, num(1, 3_000_000_000), num(2, 7))))))),
    (m: M) => m.message.value.message.value.result.value.diagnostics[0].range.start,
    expect.objectContaining({ line: 3_000_000_000, column: 7 }),
  ),
];

/** §8: every ErrorDetails.Error value of the addendum's complete list, by number. */
const ADDENDUM_2_ERRORS: Record<number, string> = {
  0: "UNSPECIFIED",
  1: "BAD_API_KEY",
  2: "NOT_LOGGED_IN",
  3: "INVALID_AUTH_ID",
  4: "NOT_HIGH_ENOUGH_PERMISSIONS",
  5: "BAD_MODEL_NAME",
  6: "USER_NOT_FOUND",
  7: "FREE_USER_RATE_LIMIT_EXCEEDED",
  8: "PRO_USER_RATE_LIMIT_EXCEEDED",
  9: "FREE_USER_USAGE_LIMIT",
  10: "PRO_USER_USAGE_LIMIT",
  11: "AUTH_TOKEN_NOT_FOUND",
  12: "AUTH_TOKEN_EXPIRED",
  13: "OPENAI",
  14: "OPENAI_RATE_LIMIT_EXCEEDED",
  18: "AGENT_REQUIRES_LOGIN",
  20: "MAX_TOKENS",
  21: "USER_ABORTED_REQUEST",
  22: "GENERIC_RATE_LIMIT_EXCEEDED",
  23: "PRO_USER_ONLY",
  25: "TIMEOUT",
  28: "GPT_4_VISION_PREVIEW_RATE_LIMIT",
  29: "CUSTOM_MESSAGE",
  30: "OUTDATED_CLIENT",
  31: "CLAUDE_IMAGE_TOO_LARGE",
  33: "FILE_NOT_FOUND",
  34: "API_KEY_RATE_LIMIT",
  35: "DEBOUNCED",
  36: "BAD_REQUEST",
  37: "REPOSITORY_SERVICE_REPOSITORY_IS_NOT_INITIALIZED",
  38: "UNAUTHORIZED",
  39: "NOT_FOUND",
  40: "DEPRECATED",
  41: "RESOURCE_EXHAUSTED",
  42: "BAD_USER_API_KEY",
  43: "CONVERSATION_TOO_LONG",
  44: "USAGE_PRICING_REQUIRED",
  45: "USAGE_PRICING_REQUIRED_CHANGEABLE",
  50: "RATE_LIMITED",
  51: "RATE_LIMITED_CHANGEABLE",
  52: "CUSTOM",
  53: "HOOKS_BLOCKED",
  54: "SUSPICIOUS_USAGE_BLOCKED",
  55: "EXTENSION_HOST_TIMEOUT",
  56: "NETWORK_ERROR",
  57: "PROVIDER_ERROR",
  58: "MODEL_BLOCKED",
  59: "INTERNAL",
  60: "MAX_MODE_REQUIRED",
  61: "MODEL_NO_LONGER_SUPPORTED",
  62: "PRICING_WARNING",
  63: "SLOW_POOL",
  64: "UNSUPPORTED_REGION",
  65: "ACCOUNT_CLOSED",
};
// 46–49 are "GITHUB_*" in the addendum; their names come from the older references.
for (const n of [46, 47, 48, 49]) ADDENDUM_2_ERRORS[n] = "GITHUB_";

function check(schema: typeof AgentServerMessageSchema | typeof AgentClientMessageSchema, c: Case): void {
  const decoded = fromBinary(schema as typeof AgentServerMessageSchema, new Uint8Array(c.frame));
  expect(findUnknownFields(schema as typeof AgentServerMessageSchema, decoded)).toEqual([]);
  expect(c.read(decoded as never)).toEqual(c.expected);
}

describe("addendum 2 fields decode from hand-encoded frames", () => {
  it.each(SERVER_CASES.map((c) => [c.name, c] as const))("%s", (_, c) => check(AgentServerMessageSchema, c));
  it.each(CLIENT_CASES.map((c) => [c.name, c] as const))("%s", (_, c) => check(AgentClientMessageSchema, c));

  it.each(Object.entries(ADDENDUM_2_ERRORS))(
    "ErrorDetails.error = %s decodes to its name (generated names drop the ERROR_ prefix)",
    (number, name) => {
      const decoded = fromBinary(ErrorDetailsSchema, new Uint8Array(num(1, Number(number))));
      expect(ErrorDetails_Error[decoded.error]).toMatch(new RegExp(`^${name}`));
    },
  );

  it("ErrorDetails {details {title 1, detail 2, is_retryable 4, show_request_id 5, …}, is_expected 3}", () => {
    const frame = [
      ...num(1, 58),
      ...msg(
        2,
        str(1, "Model blocked"),
        str(2, "ask your admin"),
        num(4, true),
        num(5, true),
        num(6, false),
        msg(7, str(1, "k"), str(2, "v")),
      ),
      ...num(3, true),
    ];
    const decoded = fromBinary(ErrorDetailsSchema, new Uint8Array(frame));
    expect(findUnknownFields(ErrorDetailsSchema, decoded)).toEqual([]);
    expect(decoded.error).toBe(ErrorDetails_Error.MODEL_BLOCKED);
    expect(decoded.isExpected).toBe(true);
    expect(decoded.details).toMatchObject({
      title: "Model blocked",
      detail: "ask your admin",
      isRetryable: true,
      showRequestId: true,
      shouldShowImmediateError: false,
      additionalInfo: { k: "v" },
    });
  });
});
