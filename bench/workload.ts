/**
 * The realistic request shape of the conversation scenarios (an agent client such as OpenCode: a system prompt and a
 * handful of declared tools on every request), in both forms: OpenAI `tools` for cursor-bridge, and MCP tool
 * definitions for the direct driver (`input_schema` as serialized google.protobuf.Value, docs/protocol.md §4.5).
 */
import { create, fromJson, type JsonValue, toBinary } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { type McpToolDefinition, McpToolDefinitionSchema } from "../src/gen/agent/v1/mcp_pb.js";

interface ToolSpec {
  name: string;
  description: string;
  parameters: { [key: string]: JsonValue };
}

const str = (description: string) => ({ type: "string", description });

const TOOL_SPECS: readonly ToolSpec[] = [
  {
    name: "bash",
    description: "Executes a bash command in a persistent shell session with an optional timeout.",
    parameters: {
      type: "object",
      properties: {
        command: str("The command to execute"),
        timeout: { type: "number" },
        description: str("What it does"),
      },
      required: ["command", "description"],
    },
  },
  {
    name: "read",
    description: "Reads a file from the local filesystem, optionally a line range.",
    parameters: {
      type: "object",
      properties: { filePath: str("Absolute path"), offset: { type: "number" }, limit: { type: "number" } },
      required: ["filePath"],
    },
  },
  {
    name: "glob",
    description: "Fast file pattern matching that works with any codebase size.",
    parameters: { type: "object", properties: { pattern: str("Glob"), path: str("Directory") }, required: ["pattern"] },
  },
  {
    name: "grep",
    description: "Searches file contents with regular expressions.",
    parameters: {
      type: "object",
      properties: { pattern: str("Regex"), path: str("Directory"), include: str("File pattern") },
      required: ["pattern"],
    },
  },
  {
    name: "edit",
    description: "Performs exact string replacements in files.",
    parameters: {
      type: "object",
      properties: { filePath: str("Absolute path"), oldString: str("Text to replace"), newString: str("Replacement") },
      required: ["filePath", "oldString", "newString"],
    },
  },
  {
    name: "todowrite",
    description: "Creates and manages a structured task list for the current session.",
    parameters: {
      type: "object",
      properties: {
        todos: {
          type: "array",
          items: { type: "object", properties: { content: { type: "string" }, status: { type: "string" } } },
        },
      },
      required: ["todos"],
    },
  },
];

/** The declared tools as an OpenAI request's `tools`. */
export const OPENAI_TOOLS = TOOL_SPECS.map((tool) => ({
  type: "function" as const,
  function: { name: tool.name, description: tool.description, parameters: tool.parameters },
}));

/** The same tools as MCP tool definitions for the direct driver. */
export const MCP_TOOLS: readonly McpToolDefinition[] = TOOL_SPECS.map((tool) =>
  create(McpToolDefinitionSchema, {
    name: tool.name,
    toolName: tool.name,
    description: tool.description,
    inputSchema: toBinary(ValueSchema, fromJson(ValueSchema, tool.parameters)),
    providerIdentifier: "bench",
  }),
);

/** A system prompt of realistic size (~1.5 KB). */
export const SYSTEM_PROMPT = [
  "You are an interactive coding agent working in the user's repository.",
  "Be concise and direct. Prefer editing existing files over creating new ones.",
  "Use the tools to read, search and change code; never guess file contents.",
  "Before making a change, read the surrounding code and follow its conventions.",
  "Run the project's tests after a change and report what you ran.",
  "When a command fails, read the error, fix the cause, and try again once.",
  "Keep answers short: the user reads them in a terminal.",
]
  .join(" ")
  .repeat(3);

/**
 * A reply of `tokens` one-token text deltas at a rate far above what 200 streams reach on loopback: the pipeline, not
 * the pacing, sets the pace (the throughput scenario and the hop floor's throughput).
 */
export function throughputPrompt(tokens: number): string {
  return `[[emu:tokens ${tokens}]] [[emu:rate 5000]]`;
}

/**
 * How many bursts of `streams` short turns one CPU-per-request reading spans (scenario 5, and the HTTP/2 relay's CPU
 * beside it). One burst of 200 turns is 0.2–0.4 s of serve's CPU: a single old-generation collection, or the last of
 * the JIT's work, landing in it or not moved the figure by half (280 against 420 ms for the same 200 turns in two
 * repetitions of one run), where five bursts spread that over 1,000 turns, as it spreads over a server's day.
 */
export const SHORT_TURN_BURSTS = 5;

/** `burst` run `count` times, one after the other: the sum of what each returned (the chunks they carried). */
export async function inBursts(count: number, burst: () => Promise<number>): Promise<number> {
  let total = 0;
  for (let i = 0; i < count; i++) total += await burst();
  return total;
}

/** A user message of realistic length for turn `n`. */
export function userMessage(n: number): string {
  return `Turn ${n}: please look at the module we discussed, keep the public API unchanged, and explain in two sentences what you would change next and why.`;
}
