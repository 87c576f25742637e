/**
 * Checks proto/ against every table of ../shared/cursor-protocol-addendum.md: each message and field it lists as
 * reachable from AgentClientMessage / AgentServerMessage exists here with its number, name, label and type (through
 * the twin names below where we already had the structure under another name), and the field corrections hold.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  createRegistry,
  type DescField,
  type DescFile,
  type DescMessage,
  fromBinary,
  ScalarType,
  toBinary,
} from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { AgentServerMessageSchema, file_agent_v1_agent } from "../../src/gen/agent/v1/agent_pb.js";
import { file_agent_v1_selected_context } from "../../src/gen/agent/v1/selected_context_pb.js";
import { file_agent_v1_tool_results } from "../../src/gen/agent/v1/tool_results_pb.js";
import { findUnknownFields } from "./proto-walk.js";

const addendumFile = fileURLToPath(new URL("../../../shared/cursor-protocol-addendum.md", import.meta.url));
const available = existsSync(addendumFile);
if (!available)
  console.warn(`addendum schema check skipped: ${addendumFile} is absent (a user's clone has no ../shared)`);

function withDependencies(files: DescFile[], seen = new Set<DescFile>()): DescFile[] {
  for (const file of files) {
    if (seen.has(file)) continue;
    seen.add(file);
    withDependencies(file.dependencies, seen);
  }
  return [...seen];
}
const registry = createRegistry(
  ...withDependencies([file_agent_v1_agent, file_agent_v1_selected_context, file_agent_v1_tool_results]),
);

/** The addendum's names for structures we already had under another name (same fields on the wire). */
const TWINS: Record<string, string> = {
  AskQuestionArgs_Option: "AskQuestionOption",
  AskQuestionArgs_Question: "AskQuestionQuestion",
  AskQuestionSuccess_Answer: "AskQuestionAnswer",
  BackgroundShellSpawnError: "ShellSpawnError",
  ExecClientHeartbeat: "ExecHeartbeat",
  ExecClientStreamClose: "ExecStreamClose",
  ExecClientThrow: "ExecThrow",
  LsDirectoryTreeNode_File: "LsDirectoryTreeFile",
  McpToolError: "McpError",
  McpToolResult: "McpResult",
  ReadLintsToolArgs: "ReadLintsArgs",
  ReadLintsToolResult: "ReadLintsResult",
  ShellCommandParsingResult_ExecutableCommand: "ShellExecutableCommand",
  ShellCommandParsingResult_ExecutableCommandArg: "ShellCommandArg",
  AppliedAgentChange_ChangeType: "AppliedAgentChange.ChangeType",
  ListMcpResourcesExecResult_McpResource: "McpResource",
  RequestedModel_ModelParameterValue: "RequestedModelParameter",
};
for (const kind of ["WebFetch", "WebSearch", "ExaSearch", "ExaFetch", "SwitchMode"]) {
  TWINS[`${kind}RequestResponse`] = "ApprovalResponse";
  for (const sep of ["_", "."]) {
    TWINS[`${kind}RequestResponse${sep}Approved`] = "InteractionApproved";
    TWINS[`${kind}RequestResponse${sep}Rejected`] = "InteractionRejected";
  }
}

function ourName(name: string): string {
  return `agent.v1.${TWINS[name] ?? name.replaceAll("_", "")}`;
}

interface Row {
  message: string;
  spec: string;
}

function tableRows(text: string, from: string, to: string): Row[] {
  const section = text.split(from)[1]?.split(to)[0] ?? "";
  return section
    .split("\n")
    .filter((line) => line.startsWith("| ") && !line.startsWith("| message") && !line.startsWith("| enum"))
    .map((line) => {
      const [message = "", spec = ""] = line
        .slice(1, -1)
        .split("|")
        .map((cell) => cell.trim());
      return { message, spec };
    });
}

const SCALARS: Record<string, ScalarType> = {
  string: ScalarType.STRING,
  bytes: ScalarType.BYTES,
  bool: ScalarType.BOOL,
  int32: ScalarType.INT32,
  int64: ScalarType.INT64,
  uint32: ScalarType.UINT32,
  uint64: ScalarType.UINT64,
  double: ScalarType.DOUBLE,
  float: ScalarType.FLOAT,
};

/** Returns what is wrong with one `name=N [optional|repeated] Type [(oneof x)]` entry, or undefined. */
function fieldProblem(message: DescMessage, entry: string): string | undefined {
  const match = /^(\w+)=(\d+) (optional |repeated )?([\w.]+)( \(oneof (\w+)\))?$/.exec(entry);
  if (match === null) return `cannot parse "${entry}"`;
  const [, name, number, label, type = "", , oneof] = match;
  const field: DescField | undefined = message.fields.find((f) => f.number === Number(number));
  if (field === undefined) return `${message.typeName}: no field ${number} (${name})`;
  if (field.name !== name) return `${message.typeName}.${number}: named ${field.name}, addendum says ${name}`;
  if (oneof !== undefined && field.oneof === undefined) return `${message.typeName}.${name}: not in a oneof`;
  if (type.endsWith("AnnotationsEntry")) return field.fieldKind === "map" ? undefined : `${name}: not a map`;
  if ((label === "repeated ") !== (field.fieldKind === "list")) return `${message.typeName}.${name}: repeated differs`;
  const scalar = SCALARS[type];
  if (scalar !== undefined) {
    const actual = field.fieldKind === "scalar" || field.fieldKind === "list" ? field.scalar : undefined;
    if (actual !== scalar) return `${message.typeName}.${name}: not ${type}`;
    if (label === "optional " && field.fieldKind === "scalar" && field.proto.proto3Optional !== true) {
      return `${message.typeName}.${name}: declared without presence`;
    }
    return undefined;
  }
  const target = field.fieldKind === "enum" ? field.enum : field.fieldKind === "list" ? field.enum : undefined;
  const targetMessage = field.message;
  const actualName = targetMessage?.typeName ?? target?.typeName;
  const expected = ourName(type);
  if (field.fieldKind === "enum" && registry.getEnum(expected) === undefined && type.endsWith("Range") === false) {
    return `${message.typeName}.${name}: enum ${expected} missing`;
  }
  if (actualName !== expected) return `${message.typeName}.${name}: type ${actualName}, expected ${expected}`;
  return undefined;
}

describe.skipIf(!available)("the schema holds every message and field of the protocol addendum", () => {
  const text = available ? readFileSync(addendumFile, "utf8") : "";
  const rows = [
    ...tableRows(text, "### Messages reachable", "### Fields missing"),
    ...tableRows(text, "### Fields missing", "### Enums"),
  ];

  it("reads both tables", () => {
    expect(rows.length).toBeGreaterThan(190);
  });

  it.each(rows.filter((row) => !row.message.endsWith("AnnotationsEntry")))("$message", ({ message, spec }) => {
    const desc = registry.getMessage(ourName(message));
    expect(desc, `${ourName(message)} is declared`).toBeDefined();
    if (desc === undefined || spec === "(empty)") return;
    const problems = spec
      .split(", ")
      .map((entry) => fieldProblem(desc, entry))
      .filter((problem) => problem !== undefined);
    expect(problems).toEqual([]);
  });

  it("declares the enums it lists with their values", () => {
    const enums = tableRows(text, "### Enums those fields use", "\n\n#");
    expect(enums.length).toBe(2);
    for (const { message: name, spec } of enums) {
      const desc = registry.getEnum(ourName(name));
      expect(desc, name).toBeDefined();
      const values = spec.split(", ").map((entry) => entry.split(" "));
      for (const [valueName, valueNumber] of values) {
        expect(desc?.values.find((value) => value.number === Number(valueNumber))?.name).toBe(valueName);
      }
    }
  });
});

describe("field corrections of the addendum", () => {
  const get = (name: string) => {
    const desc = registry.getMessage(`agent.v1.${name}`);
    if (desc === undefined) throw new Error(`${name} missing`);
    return desc;
  };
  it("numbers ListMcpResourcesError.error 1 and gives WebFetchRejected only reason = 1", () => {
    expect(get("ListMcpResourcesError").fields.map((f) => [f.name, f.number])).toEqual([["error", 1]]);
    expect(get("WebFetchRejected").fields.map((f) => [f.name, f.number])).toEqual([["reason", 1]]);
  });
  it("makes the read counters uint32 and ms_to_wait an optional int32", () => {
    const kinds = (message: string, names: string[]) =>
      names.map((name) => {
        const field = get(message).fields.find((f) => f.name === name);
        return field?.fieldKind === "scalar" ? [field.scalar, field.proto.proto3Optional] : undefined;
      });
    expect(kinds("ReadRange", ["start_line", "end_line"])).toEqual([
      [ScalarType.UINT32, false],
      [ScalarType.UINT32, false],
    ]);
    expect(kinds("ReadToolSuccess", ["total_lines", "file_size"])).toEqual([
      [ScalarType.UINT32, false],
      [ScalarType.UINT32, false],
    ]);
    expect(kinds("ShellStreamBackgrounded", ["ms_to_wait"])).toEqual([[ScalarType.INT32, true]]);
  });
  it("names the InteractionResponse oneof result", () => {
    expect(get("InteractionResponse").oneofs.map((oneof) => oneof.name)).toEqual(["result"]);
  });
});

describe("optional fields carried at their empty value (presence)", () => {
  it("declares the addendum's presence fields optional", () => {
    const optional = (message: string, names: string[]) =>
      names.map((name) => registry.getMessage(`agent.v1.${message}`)?.fields.find((f) => f.name === name)?.proto);
    for (const proto of [
      ...optional("ReadToolSuccess", ["read_range", "include_line_numbers"]),
      ...optional("EditSuccess", ["diff_string", "before_full_file_content"]),
    ]) {
      expect(proto?.proto3Optional).toBe(true);
    }
  });

  // Built by hand (tag bytes, not our encoder) the way real traffic carries them: present fields at their empty value.
  const readSuccess = Buffer.from([
    ...[0x0a, 0x02, 0x68, 0x69], // content = "hi"
    ...[0x3a, 0x03, 0x61, 0x2e, 0x74], // path = "a.t"
    ...[0x42, 0x00], // read_range = {} (present, empty)
    ...[0x58, 0x00], // include_line_numbers = false (present)
  ]);
  const editSuccess = Buffer.from([
    ...[0x0a, 0x03, 0x61, 0x2e, 0x74], // path = "a.t"
    ...[0x2a, 0x00], // diff_string = "" (present)
    ...[0x32, 0x00], // before_full_file_content = "" (present)
    ...[0x3a, 0x01, 0x78], // after_full_file_content = "x"
  ]);
  const toolCallCompleted = (toolCase: number, resultBytes: Buffer) => {
    const lengthPrefixed = (tag: number, bytes: Buffer) => Buffer.from([tag, bytes.length, ...bytes]);
    const result = lengthPrefixed(0x0a, resultBytes); // *Result.success = 1
    const toolCallBody = lengthPrefixed(0x12, result); // *ToolCall.result = 2
    const toolCall = lengthPrefixed(toolCase, toolCallBody); // ToolCall.<case>
    const completed = Buffer.concat([Buffer.from([0x0a, 0x02, 0x74, 0x31]), lengthPrefixed(0x12, toolCall)]);
    const update = lengthPrefixed(0x1a, completed); // InteractionUpdate.tool_call_completed = 3
    return lengthPrefixed(0x0a, update); // AgentServerMessage.interaction_update = 1
  };

  it.each([
    ["read", 0x42, readSuccess],
    ["edit", 0x62, editSuccess],
  ])("re-encodes a %s tool_call_completed frame byte-identical", (_name, toolCase, resultBytes) => {
    const frame = toolCallCompleted(toolCase, resultBytes);
    const message = fromBinary(AgentServerMessageSchema, frame);
    expect(findUnknownFields(AgentServerMessageSchema, message)).toEqual([]);
    expect(Buffer.from(toBinary(AgentServerMessageSchema, message)).toString("hex")).toBe(frame.toString("hex"));
  });
});
