/**
 * Golden tests of the two vectors besides the captured tool calls (../shared/vectors/README.md):
 *
 * - `cursor-agent-traffic-summary.captured-2026-01-26.log`, a real CLI session's hosts, paths and content types: every
 *   RPC it shows is one the emulator serves, answered with the content type the capture shows, and the Run streams
 *   what the capture saw (text deltas, then one `turn_ended`).
 * - `checksum-worked-example.computed.json`, the legacy `x-cursor-checksum` (computed, not captured): the agent API
 *   takes requests with it in either byte layout and without it (docs/protocol.md §2.4), and cursor-bridge sends none,
 *   as the official CLI sends none.
 *
 * They skip, saying why, only when ../shared/vectors is absent; a missing file inside it fails.
 */

import { readFileSync } from "node:fs";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { AgentClientMessageSchema } from "../../src/gen/agent/v1/agent_pb.js";
import { NameAgentRequestSchema, NameAgentResponseSchema } from "../../src/gen/agent/v1/models_pb.js";
import { encodeEnvelope } from "../../src/protocol/connect/envelope.js";
import { buildCursorHeaders } from "../../src/protocol/cursor/headers.js";
import {
  agentClient,
  BlobStore,
  CLIENT_VERSION,
  cursorHeaders,
  driveRun,
  runRequest,
  updateCases,
} from "../emulator/support/raw-client.js";
import { h2Post } from "../emulator/support/raw-http.js";
import { HAS_VECTORS, reportSharedSkip, VECTORS_DIR } from "../support/shared.js";

reportSharedSkip("golden traffic and checksum vectors");

/** One request of the captured session: its method, URL and the content type of its answer, when the log shows one. */
interface CapturedCall {
  method: string;
  url: URL;
  contentType: string | undefined;
}

/**
 * Reads the mitmproxy summary: a `Request #N` block names the method and URL; the `Response #N` block of the same N
 * names the answer's content type. The streamed answer (`Streaming Response #?`) is the Run's; its events are listed.
 */
function readTrafficLog(text: string): { calls: CapturedCall[]; streamed: { contentType: string; events: string[] } } {
  const calls = new Map<string, CapturedCall>();
  let request: string | undefined;
  let response: string | undefined;
  let method = "";
  let streaming = false;
  const streamed = { contentType: "", events: [] as string[] };
  for (const line of text.split("\n")) {
    const trimmed = line.trim();
    const requestHead = /^Request #(\d+)$/.exec(trimmed);
    const responseHead = /^── Response #(\d+) ──$/.exec(trimmed);
    if (requestHead !== null) [request, response, streaming] = [requestHead[1], undefined, false];
    else if (responseHead !== null) [response, streaming] = [responseHead[1], false];
    else if (trimmed.startsWith("── Streaming Response")) [response, streaming] = [undefined, true];
    else if (trimmed.startsWith("Method: ")) method = trimmed.slice("Method: ".length);
    else if (trimmed.startsWith("URL: ") && request !== undefined) {
      calls.set(request, { method, url: new URL(trimmed.slice("URL: ".length)), contentType: undefined });
    } else if (trimmed.startsWith("Content-Type: ")) {
      const contentType = trimmed.slice("Content-Type: ".length);
      if (streaming) streamed.contentType = contentType;
      else if (response !== undefined) {
        const call = calls.get(response);
        if (call !== undefined) call.contentType = contentType;
      }
    } else if (streaming && /^- \w+: \d+$/.test(trimmed)) streamed.events.push(trimmed.slice(2).split(":")[0] ?? "");
  }
  return { calls: [...calls.values()], streamed };
}

const ChecksumVectorSchema = z.object({
  inputs: z.object({ now_ms: z.number(), token: z.string() }),
  full_137_char_header_variant_A: z.string().length(137),
  "variant_B_true_48bit_big_endian (wisdgod, raphapr/OpenCursor with 30-min bucket)": z.object({ base64: z.string() }),
  "machineId_sha256(token+'machineId')_hex": z.string().regex(/^[0-9a-f]{64}$/),
  "macMachineId_sha256(token+'macMachineId')_hex": z.string().regex(/^[0-9a-f]{64}$/),
});

describe.skipIf(!HAS_VECTORS)("golden: captured traffic summary and the computed checksum", () => {
  let emulator: Emulator;
  let token: string;
  beforeAll(async () => {
    emulator = await startEmulator({ heartbeatIntervalMs: 50 });
    token = emulator.issueTokens().accessToken;
  });
  afterAll(async () => {
    await emulator.close();
  });

  const log = () =>
    readTrafficLog(readFileSync(`${VECTORS_DIR}cursor-agent-traffic-summary.captured-2026-01-26.log`, "utf8"));

  it("the log is read: three calls, all POST, and a streamed Run answer", () => {
    const { calls, streamed } = log();
    expect(calls.map((call) => `${call.method} ${call.url.pathname}`)).toEqual([
      "POST /aiserver.v1.AiService/NameAgent",
      "POST /agent.v1.AgentService/Run",
      "POST /aiserver.v1.AnalyticsService/TrackEvents",
    ]);
    expect(streamed.contentType).toBe("application/connect+proto");
    expect(streamed.events).toEqual(["text_delta", "turn_ended"]);
  });

  it("AiService/NameAgent is answered application/proto with a name, as captured", async () => {
    const call = log().calls.find((c) => c.url.pathname.endsWith("/NameAgent"));
    expect(call?.contentType).toBe("application/proto");
    const response = await fetch(`${emulator.url}${call?.url.pathname}`, {
      method: "POST",
      headers: { ...cursorHeaders(token), "content-type": "application/proto", "connect-protocol-version": "1" },
      body: toBinary(NameAgentRequestSchema, create(NameAgentRequestSchema, { userMessage: "list your tools" })),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe(call?.contentType);
    const answer = fromBinary(NameAgentResponseSchema, new Uint8Array(await response.arrayBuffer()));
    expect(answer.name).not.toBe("");
  });

  it("AnalyticsService/TrackEvents is answered application/json, as captured", async () => {
    const call = log().calls.find((c) => c.url.pathname.endsWith("/TrackEvents"));
    expect(call?.contentType).toBe("application/json");
    const response = await fetch(`${emulator.url}${call?.url.pathname}`, {
      method: "POST",
      headers: { ...cursorHeaders(token), "content-type": "application/json", "connect-protocol-version": "1" },
      body: "{}",
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe(call?.contentType);
  });

  it("AgentService/Run streams application/connect+proto: text deltas, then one turn_ended", async () => {
    const { calls, streamed } = log();
    const run = calls.find((c) => c.url.pathname.endsWith("/Run"));
    const raw = await h2Post(
      emulator.url,
      run?.url.pathname ?? "",
      { ...cursorHeaders(token), "content-type": "application/connect+proto", "connect-protocol-version": "1" },
      encodeEnvelope(0, toBinary(AgentClientMessageSchema, runRequest("hi"))),
    );
    expect(raw.status).toBe(200);
    expect(raw.headers["content-type"]).toBe(streamed.contentType);
    const turn = await driveRun(agentClient(emulator.url, token), runRequest("hello there"), new BlobStore());
    expect(turn.error).toBeUndefined();
    const events = [...new Set(updateCases(turn).filter((c) => c === "textDelta" || c === "turnEnded"))];
    expect(events).toEqual(["textDelta", "turnEnded"]);
    expect(updateCases(turn).filter((c) => c === "turnEnded")).toHaveLength(1);
  });

  const checksum = () =>
    ChecksumVectorSchema.parse(JSON.parse(readFileSync(`${VECTORS_DIR}checksum-worked-example.computed.json`, "utf8")));

  it("a Run with x-cursor-checksum in either timestamp layout, or without one, is served alike", async () => {
    const vector = checksum();
    const machineIds = `${vector["machineId_sha256(token+'machineId')_hex"]}/${vector["macMachineId_sha256(token+'macMachineId')_hex"]}`;
    const layoutB = vector["variant_B_true_48bit_big_endian (wisdgod, raphapr/OpenCursor with 30-min bucket)"].base64;
    const headers = [vector.full_137_char_header_variant_A, `${layoutB}${machineIds}`, null];
    for (const value of headers) {
      const client = agentClient(emulator.url, token, { overrides: { "x-cursor-checksum": value } });
      const turn = await driveRun(client, runRequest("checksum"), new BlobStore());
      expect(turn.error, String(value)).toBeUndefined();
      expect(turn.text).toBe("You said: checksum");
    }
  });

  it("cursor-bridge sends no x-cursor-checksum, as the official CLI sends none", () => {
    const vector = checksum();
    const headers = buildCursorHeaders({
      accessToken: vector.inputs.token,
      clientVersion: CLIENT_VERSION,
      ghostMode: true,
      requestId: "00000000-0000-4000-8000-000000000000",
      streaming: true,
    });
    expect(Object.keys(headers).map((name) => name.toLowerCase())).not.toContain("x-cursor-checksum");
  });
});
