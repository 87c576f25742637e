/**
 * Strictness rules (docs/protocol.md §2.1, §4.1, §4.12): every header rule, token expiry, the outdated-client
 * error, malformed protobuf, and every scripted error code with its machine-readable ErrorDetails.
 */
import { create, fromBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { MAX_USER_MESSAGE_BYTES } from "../../src/emulator/turn.js";
import { AgentClientMessageSchema } from "../../src/gen/agent/v1/agent_pb.js";
import { GetUsableModelsResponseSchema } from "../../src/gen/agent/v1/models_pb.js";
import { ErrorDetails_Error, ErrorDetailsSchema } from "../../src/gen/aiserver/v1/error_pb.js";
import { encodeEnvelope } from "../../src/protocol/connect/envelope.js";
import { agentClient, BlobStore, CLIENT_VERSION, cursorHeaders, driveRun, runRequest } from "./support/raw-client.js";
import { connectErrorOf, h2Post } from "./support/raw-http.js";

let emulator: Emulator;
let token: string;

beforeAll(async () => {
  emulator = await startEmulator({ heartbeatIntervalMs: 20 });
  token = emulator.issueTokens().accessToken;
});
afterAll(async () => {
  await emulator.close();
});

async function unaryError(overrides: Record<string, string | null>, bearer = token): Promise<ConnectError | undefined> {
  const client = agentClient(emulator.url, bearer, { overrides });
  return client.getUsableModels({}).then(
    () => undefined,
    (error: unknown) => ConnectError.from(error),
  );
}

function detailOf(error: ConnectError | undefined): ErrorDetails_Error | undefined {
  return error?.findDetails(ErrorDetailsSchema)[0]?.error;
}

describe("authorization", () => {
  it("missing → unauthenticated (NOT_LOGGED_IN), on unary calls and on Run", async () => {
    const error = await unaryError({ authorization: null });
    expect(error?.code).toBe(Code.Unauthenticated);
    expect(detailOf(error)).toBe(ErrorDetails_Error.NOT_LOGGED_IN);
    const run = await driveRun(
      agentClient(emulator.url, token, { overrides: { authorization: null } }),
      runRequest("hi"),
      new BlobStore(),
    );
    expect(run.error?.code).toBe(Code.Unauthenticated);
  });

  it("malformed (not `Bearer <token>`) → unauthenticated", async () => {
    expect((await unaryError({ authorization: `Token ${token}` }))?.code).toBe(Code.Unauthenticated);
    expect((await unaryError({ authorization: "Bearer" }))?.code).toBe(Code.Unauthenticated);
  });

  it("a token this emulator did not sign → unauthenticated (AUTH_TOKEN_NOT_FOUND)", async () => {
    const other = await startEmulator();
    try {
      const error = await unaryError({}, other.issueTokens().accessToken);
      expect(error?.code).toBe(Code.Unauthenticated);
      expect(detailOf(error)).toBe(ErrorDetails_Error.AUTH_TOKEN_NOT_FOUND);
    } finally {
      await other.close();
    }
    expect((await unaryError({}, "not-a-jwt"))?.code).toBe(Code.Unauthenticated);
  });

  it("an expired token → unauthenticated (AUTH_TOKEN_EXPIRED); a refresh token is not an access token", async () => {
    const expired = await unaryError({}, emulator.issueTokens({ expiresInSeconds: -10 }).accessToken);
    expect(expired?.code).toBe(Code.Unauthenticated);
    expect(detailOf(expired)).toBe(ErrorDetails_Error.AUTH_TOKEN_EXPIRED);
    expect((await unaryError({}, emulator.issueTokens().refreshToken))?.code).toBe(Code.Unauthenticated);
  });
});

describe("client headers", () => {
  it("x-cursor-client-type missing on a Run, or not `cli`/`sdk`/`ide` → invalid_argument", async () => {
    const run = await driveRun(
      agentClient(emulator.url, token, { overrides: { "x-cursor-client-type": null } }),
      runRequest("hi"),
      new BlobStore(),
    );
    expect(run.error?.code).toBe(Code.InvalidArgument);
    expect((await unaryError({ "x-cursor-client-type": "vscode" }))?.code).toBe(Code.InvalidArgument);
  });

  it("takes every version form Cursor's own clients send (addendum 3 E8, E11, E12)", async () => {
    const accepted = [
      ["cli", "cli-2026.09.02-fa0c06e-lab"],
      ["sdk", "sdk-python-1.4.2"],
      ["sdk", "agentkit-0.3.1"],
      ["sdk", "sdk-unknown"],
      ["ide", "3.18.9"],
      ["ide", CLIENT_VERSION],
    ];
    for (const [type, version] of accepted) {
      const headers = { "x-cursor-client-type": type ?? "", "x-cursor-client-version": version ?? "" };
      expect(await unaryError(headers), `${type} ${version}`).toBeUndefined();
    }
    const run = await driveRun(
      agentClient(emulator.url, token, {
        overrides: { "x-cursor-client-type": "ide", "x-cursor-client-version": "3.18.9" },
      }),
      runRequest("hello ide"),
      new BlobStore(),
    );
    expect(run.text).toBe("You said: hello ide");
    // The IDE's form only with the IDE's type; a build id must still be one.
    expect((await unaryError({ "x-cursor-client-version": "3.18.9" }))?.code).toBe(Code.InvalidArgument);
    expect((await unaryError({ "x-cursor-client-version": "cli-2026.09.02-fa0c06e-beta" }))?.code).toBe(
      Code.InvalidArgument,
    );
  });

  it("a unary call without a client type is answered when its token is valid, and refused when it is not", async () => {
    expect(await unaryError({ "x-cursor-client-type": null, "x-cursor-client-version": null })).toBeUndefined();
    const expired = emulator.issueTokens({ expiresInSeconds: -10 }).accessToken;
    expect((await unaryError({ "x-cursor-client-type": null }, expired))?.code).toBe(Code.Unauthenticated);
  });

  it("x-cursor-client-version missing or malformed → invalid_argument", async () => {
    expect((await unaryError({ "x-cursor-client-version": null }))?.code).toBe(Code.InvalidArgument);
    expect((await unaryError({ "x-cursor-client-version": "2.6.21" }))?.code).toBe(Code.InvalidArgument);
  });

  it("a version older than the minimum → failed_precondition with OUTDATED_CLIENT and update wording", async () => {
    const error = await unaryError({ "x-cursor-client-version": "cli-2025.01.01-abcdef0" });
    expect(error?.code).toBe(Code.FailedPrecondition);
    expect(detailOf(error)).toBe(ErrorDetails_Error.OUTDATED_CLIENT);
    expect(error?.rawMessage).toContain("Please update to the latest version of Cursor.");
    expect(await unaryError({ "x-cursor-client-version": "cli-2025.11.25-d5b3271" })).toBeUndefined();
  });

  it("the minimum is configurable", async () => {
    const strict = await startEmulator({ minClientVersion: "cli-2030.01.01-0000000" });
    try {
      const client = agentClient(strict.url, strict.issueTokens().accessToken);
      const error = await client.getUsableModels({}).catch((e: unknown) => ConnectError.from(e));
      expect(error).toBeInstanceOf(ConnectError);
      expect((error as ConnectError).code).toBe(Code.FailedPrecondition);
    } finally {
      await strict.close();
    }
  });

  it("connect-protocol-version may be absent: older clients omit it on unary calls (addendum 2 §1)", async () => {
    const unary = await fetch(`${emulator.url}/agent.v1.AgentService/GetUsableModels`, {
      method: "POST",
      headers: { ...cursorHeaders(token), "content-type": "application/proto" },
      body: new Uint8Array(),
    });
    expect(unary.status).toBe(200);
    const models = fromBinary(GetUsableModelsResponseSchema, new Uint8Array(await unary.arrayBuffer()));
    expect(models.models.map((m) => m.modelId)).toContain("composer-2");
  });

  it("x-cursor-client-type sdk with an sdk-<semver> or cli- version is accepted (Cursor's own SDK)", async () => {
    for (const version of ["sdk-1.0.32", CLIENT_VERSION]) {
      expect(await unaryError({ "x-cursor-client-type": "sdk", "x-cursor-client-version": version })).toBeUndefined();
    }
    expect(
      await unaryError({ "x-cursor-client-type": "cli", "x-cursor-client-version": "sdk-1.0.32" }),
    ).toBeUndefined();
    const run = await driveRun(
      agentClient(emulator.url, token, {
        overrides: { "x-cursor-client-type": "sdk", "x-cursor-client-version": "sdk-1.0.32" },
      }),
      runRequest("hello sdk", { conversationId: "agent-0b6f3c52-6c1e-4c1a-9d59-2f1a7f4b9e11", model: "composer-2" }),
      new BlobStore(),
    );
    expect(run.error).toBeUndefined();
    expect(run.text).toBe("You said: hello sdk");
    expect((await unaryError({ "x-cursor-client-type": "sdk", "x-cursor-client-version": "sdk-one" }))?.code).toBe(
      Code.InvalidArgument,
    );
  });
});

describe("malformed protobuf", () => {
  it("a garbage unary body is an error answer, and the server keeps serving", async () => {
    const response = await fetch(`${emulator.url}/agent.v1.AgentService/NameAgent`, {
      method: "POST",
      headers: { ...cursorHeaders(token), "content-type": "application/proto", "connect-protocol-version": "1" },
      body: new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]),
    });
    expect(response.status).toBeGreaterThanOrEqual(400);
    const client = agentClient(emulator.url, token);
    expect((await client.getUsableModels({})).models.length).toBeGreaterThan(0);
  });

  it("a garbage Run frame ends the stream with an error, never a crash", async () => {
    const body = encodeEnvelope(0, new Uint8Array([0x0a, 0x05, 0x01]));
    const response = await h2Post(
      emulator.url,
      "/agent.v1.AgentService/Run",
      { ...cursorHeaders(token), "content-type": "application/connect+proto", "connect-protocol-version": "1" },
      body,
    );
    // The live service answers malformed protobuf `internal` "parse binary: …" (addendum 3 E4).
    expect(connectErrorOf(response)?.code).toBe("internal");
    expect(connectErrorOf(response)?.message).toMatch(/^parse binary: /);
    const run = await driveRun(agentClient(emulator.url, token), runRequest("still alive"), new BlobStore());
    expect(run.text).toBe("You said: still alive");
  });

  it("a first message that is not a run_request is invalid_argument; an unknown model is not_found BAD_MODEL_NAME", async () => {
    const client = agentClient(emulator.url, token);
    const cancel = create(AgentClientMessageSchema, {
      message: { case: "conversationAction", value: { action: { case: "cancelAction", value: {} } } },
    });
    expect((await driveRun(client, cancel, new BlobStore())).error?.code).toBe(Code.InvalidArgument);
    // An unknown model is `not_found` + ERROR_BAD_MODEL_NAME, as the live service answers (addendum 3 E4).
    const unknown = await driveRun(client, runRequest("hi", { model: "gpt-2" }), new BlobStore());
    expect(unknown.error?.code).toBe(Code.NotFound);
    expect(detailOf(unknown.error)).toBe(ErrorDetails_Error.BAD_MODEL_NAME);
  });
});

describe("custom_system_prompt (cursor-protocol-addendum-3.md S1)", () => {
  it("is refused as for an ordinary account, invalid_argument \"unknown option '--system-prompt'\"; empty is taken", async () => {
    const client = agentClient(emulator.url, token);
    const withPrompt = (prompt: string) => {
      const message = runRequest("hi");
      if (message.message.case === "runRequest") message.message.value.customSystemPrompt = prompt;
      return message;
    };
    const refused = await driveRun(client, withPrompt("You are terse."), new BlobStore());
    expect(refused.error?.code).toBe(Code.InvalidArgument);
    expect(refused.error?.rawMessage).toBe("unknown option '--system-prompt'");
    const empty = await driveRun(client, withPrompt(""), new BlobStore());
    expect(empty.error).toBeUndefined();
    expect(empty.text).toBe("You said: hi");
  });
});

describe("user message size (cursor-protocol-addendum-3.md P14)", () => {
  it("one message of up to 1 MiB of text is taken; one byte more is invalid_argument", async () => {
    const client = agentClient(emulator.url, token);
    const at = await driveRun(client, runRequest("é".repeat(MAX_USER_MESSAGE_BYTES / 2)), new BlobStore());
    expect(at.error).toBeUndefined();
    const over = await driveRun(client, runRequest(`${"é".repeat(MAX_USER_MESSAGE_BYTES / 2)}x`), new BlobStore());
    expect(over.error?.code).toBe(Code.InvalidArgument);
    expect(over.error?.rawMessage).toContain(`${MAX_USER_MESSAGE_BYTES + 1} bytes`);
  });
});

describe("[[emu:error CODE]]", () => {
  const cases = [
    ["usage_limit", Code.ResourceExhausted, ErrorDetails_Error.PRO_USER_USAGE_LIMIT],
    ["unauthenticated", Code.Unauthenticated, ErrorDetails_Error.AUTH_TOKEN_NOT_FOUND],
    ["outdated_client", Code.FailedPrecondition, ErrorDetails_Error.OUTDATED_CLIENT],
    ["internal", Code.Internal, ErrorDetails_Error.UNSPECIFIED],
    ["blob_not_found", Code.Internal, ErrorDetails_Error.NOT_FOUND],
  ] as const;
  it.each(cases)("%s → the matching Connect code with ErrorDetails", async (name, code, detail) => {
    const result = await driveRun(
      agentClient(emulator.url, token),
      runRequest(`[[emu:error ${name}]]`),
      new BlobStore(),
    );
    expect(result.error?.code).toBe(code);
    expect(result.error?.findDetails(ErrorDetailsSchema)[0]?.error).toBe(detail);
    if (name === "blob_not_found") expect(result.error?.rawMessage).toBe("Blob not found");
    if (name === "outdated_client") expect(result.error?.rawMessage).toContain(CLIENT_VERSION);
  });
});

describe("[[emu:error NAME]] (any ErrorDetails.Error value, cursor-protocol-addendum-2.md §8)", () => {
  it.each([
    ["MODEL_BLOCKED", ErrorDetails_Error.MODEL_BLOCKED, Code.PermissionDenied],
    ["ERROR_CONVERSATION_TOO_LONG", ErrorDetails_Error.CONVERSATION_TOO_LONG, Code.InvalidArgument],
    ["USAGE_PRICING_REQUIRED", ErrorDetails_Error.USAGE_PRICING_REQUIRED, Code.ResourceExhausted],
    ["ACCOUNT_CLOSED", ErrorDetails_Error.ACCOUNT_CLOSED, Code.PermissionDenied],
  ] as const)("%s → ErrorDetails{error, details{title: Emulated NAME, detail}}", async (name, error, code) => {
    const result = await driveRun(
      agentClient(emulator.url, token),
      runRequest(`[[emu:error ${name}]]`),
      new BlobStore(),
    );
    const details = result.error?.findDetails(ErrorDetailsSchema)[0];
    expect(result.error?.code).toBe(code);
    expect(details?.error).toBe(error);
    expect(details?.details?.title).toBe(`Emulated ${name.replace(/^ERROR_/, "")}`);
    expect(details?.details?.detail).toContain(`ERROR_${name.replace(/^ERROR_/, "")}`);
    // A final kind (cursor-protocol-addendum-3.md E6) says so; the others leave retrying to the client.
    expect(details?.details?.isRetryable).toBe(name.endsWith("CONVERSATION_TOO_LONG") ? false : undefined);
  });

  it("`retryable` adds is_retryable: true", async () => {
    const result = await driveRun(
      agentClient(emulator.url, token),
      runRequest("[[emu:error PROVIDER_ERROR retryable]]"),
      new BlobStore(),
    );
    const details = result.error?.findDetails(ErrorDetailsSchema)[0];
    expect(details?.error).toBe(ErrorDetails_Error.PROVIDER_ERROR);
    expect(details?.details?.isRetryable).toBe(true);
  });
});
