/**
 * A raw HTTP/1.1 "BidiSse" client (docs/protocol.md §4.3) for the emulator tests: `RunSSE` over fetch with the
 * project's one envelope codec, each client message a `BidiAppend` carrying lower-case hex and the next seqno.
 */
import { randomUUID } from "node:crypto";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type AgentClientMessage,
  AgentClientMessageSchema,
  AgentServerMessageSchema,
} from "../../../src/gen/agent/v1/agent_pb.js";
import { BidiAppendRequestSchema, BidiRequestIdSchema } from "../../../src/gen/aiserver/v1/bidi_pb.js";
import {
  createEnvelopeReader,
  encodeEnvelope,
  FLAG_END_STREAM,
  parseEndStream,
} from "../../../src/protocol/connect/envelope.js";
import {
  answersFor,
  type BlobStore,
  type ClientScript,
  collect,
  cursorHeaders,
  type TurnResult,
} from "./raw-client.js";

/** Result of one BidiAppend call. */
export interface AppendResult {
  status: number;
  code: string | undefined;
  message: string | undefined;
}

/** Sends one BidiAppend (unary Connect, `application/proto`). */
export async function bidiAppend(
  baseUrl: string,
  token: string,
  requestId: string,
  seqno: number,
  message: AgentClientMessage,
  path = "/aiserver.v1.BidiService/BidiAppend",
): Promise<AppendResult> {
  const body = toBinary(
    BidiAppendRequestSchema,
    create(BidiAppendRequestSchema, {
      data: Buffer.from(toBinary(AgentClientMessageSchema, message)).toString("hex"),
      requestId: { requestId },
      appendSeqno: BigInt(seqno),
    }),
  );
  const response = await fetch(`${baseUrl}${path}`, {
    method: "POST",
    headers: {
      ...cursorHeaders(token),
      "content-type": "application/proto",
      "connect-protocol-version": "1",
      "x-request-id": requestId,
    },
    body,
  });
  const text = await response.text();
  if (response.ok) return { status: response.status, code: undefined, message: undefined };
  const json = JSON.parse(text) as { code?: string; message?: string };
  return { status: response.status, code: json.code, message: json.message };
}

/** Opens RunSSE and returns the decoded server messages as they arrive; throws the end-stream error. */
export async function* runSse(baseUrl: string, token: string, requestId: string, signal?: AbortSignal) {
  const response = await fetch(`${baseUrl}/agent.v1.AgentService/RunSSE`, {
    method: "POST",
    headers: {
      ...cursorHeaders(token),
      "content-type": "application/connect+proto",
      "connect-protocol-version": "1",
      "x-request-id": requestId,
      "x-cursor-streaming": "true",
    },
    body: Buffer.from(encodeEnvelope(0, toBinary(BidiRequestIdSchema, create(BidiRequestIdSchema, { requestId })))),
    ...(signal === undefined ? {} : { signal }),
  });
  if (response.body === null) throw new Error(`RunSSE answered ${response.status} without a body`);
  const reader = createEnvelopeReader();
  const body = response.body.getReader();
  for (let read = await body.read(); !read.done; read = await body.read()) {
    for (const frame of reader.push(read.value)) {
      if ((frame.flags & FLAG_END_STREAM) !== 0) {
        const end = parseEndStream(frame.data);
        if (end.error !== undefined) {
          const code = Object.entries(Code).find(([name]) => snake(name) === end.error?.code)?.[1];
          const metadata = new Headers();
          for (const [key, values] of Object.entries(end.metadata)) for (const v of values) metadata.append(key, v);
          throw new ConnectError(end.error.message, typeof code === "number" ? code : Code.Unknown, metadata);
        }
        await body.cancel();
        return;
      }
      yield fromBinary(AgentServerMessageSchema, frame.data);
    }
  }
  reader.end();
}

function snake(name: string): string {
  return name.replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
}

/** Drives one turn over RunSSE + BidiAppend with a scripted client side; appends go out strictly in order. */
export async function driveSse(
  baseUrl: string,
  token: string,
  first: AgentClientMessage,
  store: BlobStore,
  script: ClientScript = {},
  /** Where the appends go: BidiService's path, or AgentService's (cursor-protocol-addendum-3.md X4). */
  appendPath?: string,
): Promise<TurnResult & { requestId: string; appendErrors: AppendResult[] }> {
  const requestId = randomUUID();
  const result = {
    messages: [],
    text: "",
    thinking: "",
    tokens: 0,
    checkpoint: undefined,
    turnEnded: false,
    error: undefined,
    heartbeats: 0,
    requestId,
    appendErrors: [] as AppendResult[],
  } as TurnResult & { requestId: string; appendErrors: AppendResult[] };
  let seqno = 0;
  let chain: Promise<void> = Promise.resolve();
  const send = (message: AgentClientMessage): void => {
    const n = seqno++;
    chain = chain.then(async () => {
      const answer = await bidiAppend(baseUrl, token, requestId, n, message, appendPath);
      if (answer.status !== 200) result.appendErrors.push(answer);
    });
  };
  // §4.3 step 4: the first append goes out concurrently with opening the stream.
  send(first);
  try {
    for await (const m of runSse(baseUrl, token, requestId)) {
      collect(result, m);
      for (const answer of answersFor(m, store, script)) send(create(AgentClientMessageSchema, answer));
      if (script.onMessage?.(m, (a) => send(create(AgentClientMessageSchema, a))) === "stop") break;
    }
  } catch (error) {
    result.error = ConnectError.from(error);
  }
  await chain;
  return result;
}
