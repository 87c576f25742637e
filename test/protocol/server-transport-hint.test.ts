/**
 * `GetServerConfig.http2_config` (cursor-protocol-addendum-3.md E13; docs/protocol.md §4.3): once an answer has said
 * HTTP/2 is disabled (for everything, or for bidi streams), transport `auto` opens Runs as RunSSE + BidiAppend over
 * HTTP/1.1; the enabled values and an explicit `--transport http2` keep HTTP/2. Against the emulator, which sends the
 * hint its `http2Config` option names.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { type EmulatorOptions, startEmulator } from "../../src/emulator/index.js";
import { type CursorApi, type CursorApiOptions, createCursorApi } from "../../src/protocol/cursor/cursor-api.js";
import { driveTurn, HandBlobs, runRequest } from "./support/hand-turn.js";

type Emulator = Awaited<ReturnType<typeof startEmulator>>;

const emulators: Emulator[] = [];
const apis: CursorApi[] = [];
afterEach(() => {
  for (const api of apis.splice(0)) api.close();
});
afterAll(async () => {
  await Promise.all(emulators.map((emulator) => emulator.close()));
});

async function setUp(hint: EmulatorOptions["http2Config"], options: Partial<CursorApiOptions> = {}) {
  const emulator = await startEmulator({ port: 0, ...(hint === undefined ? {} : { http2Config: hint }) });
  emulators.push(emulator);
  const { accessToken } = emulator.issueTokens();
  const api = createCursorApi({
    agentUrl: emulator.url,
    apiUrl: emulator.url,
    getAccessToken: async () => accessToken,
    clientVersion: "cli-2026.01.17-d239e66",
    ...options,
  });
  apis.push(api);
  return { emulator, api };
}

/** One echo turn; the transport it ran on, as the client and the emulator saw it. */
async function turn(api: CursorApi, emulator: Emulator): Promise<{ client: string; server: string | undefined }> {
  const blobs = new HandBlobs();
  const run = await api.openRun(runRequest("hello hint", blobs));
  const result = await driveTurn(run, blobs);
  expect(result.text).toContain("You said: hello hint");
  return { client: run.transport, server: emulator.stats().turns.at(-1)?.transport };
}

describe("GetServerConfig's http2_config", () => {
  it.each(["force-all-disabled", "force-bidi-disabled"] as const)(
    "%s: Runs go over HTTP/1.1 from the answer on",
    async (hint) => {
      const { emulator, api } = await setUp(hint);
      expect(await turn(api, emulator)).toEqual({ client: "http2", server: "http2" });
      await api.getServerConfig?.();
      expect(await turn(api, emulator)).toEqual({ client: "http1", server: "http1" });
    },
  );

  it.each(["force-all-enabled", "force-bidi-enabled", undefined] as const)("%s keeps HTTP/2", async (hint) => {
    const { emulator, api } = await setUp(hint);
    await api.getServerConfig?.();
    expect(await turn(api, emulator)).toEqual({ client: "http2", server: "http2" });
  });

  it("an explicit transport wins over the hint", async () => {
    const { emulator, api } = await setUp("force-all-disabled", { transport: "http2" });
    await api.getServerConfig?.();
    expect(await turn(api, emulator)).toEqual({ client: "http2", server: "http2" });
  });
});
