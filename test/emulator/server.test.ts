/** One port, two protocols: the preface sniffing holds up under 1-byte writes, and close() leaves nothing open. */
import { once } from "node:events";
import { connect as connectHttp2 } from "node:http2";
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { startEmulator } from "../../src/emulator/index.js";
import { agentClient, BlobStore, driveRun, runRequest } from "./support/raw-client.js";
import { bidiAppend, runSse } from "./support/sse-client.js";

async function writeSlowly(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let answer = "";
    socket.on("data", (chunk) => {
      answer += chunk.toString("latin1");
      if (answer.includes("\r\n\r\n")) {
        socket.destroy();
        resolve(answer);
      }
    });
    socket.on("error", reject);
    socket.on("connect", async () => {
      for (const byte of Buffer.from(text, "latin1")) {
        socket.write(Buffer.from([byte]));
        await new Promise((r) => setTimeout(r, 1));
      }
    });
  });
}

describe("dual-protocol listener", () => {
  it("routes HTTP/1.1 written one byte at a time", async () => {
    const emulator = await startEmulator();
    try {
      const port = Number(new URL(emulator.url).port);
      const answer = await writeSlowly(
        port,
        "GET /auth/poll?uuid=a&verifier=b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
      );
      expect(answer.startsWith("HTTP/1.1 404")).toBe(true);
    } finally {
      await emulator.close();
    }
  });

  it("serves HTTP/2 and HTTP/1.1 on the same port and closes with live connections", async () => {
    const emulator = await startEmulator();
    const token = emulator.issueTokens().accessToken;
    const h2 = await agentClient(emulator.url, token, { httpVersion: "2" }).getUsableModels({});
    const h1 = await agentClient(emulator.url, token, { httpVersion: "1.1" }).getUsableModels({});
    expect(h2.models).toHaveLength(h1.models.length);
    await emulator.close();
    await expect(fetch(`${emulator.url}/auth/poll`)).rejects.toThrow();
  });

  it("close() ends stalled Run and RunSSE turns and buffered appends without leaving timers", async () => {
    const timersBefore = process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
    const emulator = await startEmulator({ heartbeatIntervalMs: 20 });
    const token = emulator.issueTokens().accessToken;
    const stalled = driveRun(agentClient(emulator.url, token), runRequest("[[emu:stall 2]]"), new BlobStore());
    await bidiAppend(emulator.url, token, "stalled-sse", 0, runRequest("[[emu:stall 0]]"));
    const sse = (async () => {
      try {
        for await (const _ of runSse(emulator.url, token, "stalled-sse")) void _;
      } catch {
        // the connection goes away on close()
      }
    })();
    await bidiAppend(emulator.url, token, "never-opened", 0, runRequest("x"));
    await expect.poll(() => emulator.stats().turns.length).toBe(2);
    await emulator.close();
    expect((await stalled).error).toBeDefined();
    await sse;
    await expect.poll(() => emulator.stats().turns.map((t) => t.outcome)).toEqual(["client_closed", "client_closed"]);
    await expect
      .poll(() => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length)
      .toBeLessThanOrEqual(timersBefore);
  });
});

describe("--max-concurrent-streams", () => {
  const remoteMax = async (url: string): Promise<number | undefined> => {
    const session = connectHttp2(url);
    try {
      await once(session, "remoteSettings");
      return session.remoteSettings.maxConcurrentStreams;
    } finally {
      session.destroy();
    }
  };

  it("advertises the limit in the HTTP/2 SETTINGS, and no limit of its own by default", async () => {
    const limited = await startEmulator({ maxConcurrentStreams: 10 });
    const open = await startEmulator();
    try {
      expect(await remoteMax(limited.url)).toBe(10);
      expect(await remoteMax(open.url)).toBe(2 ** 32 - 1);
    } finally {
      await limited.close();
      await open.close();
    }
  });
});

describe("GET /emulator/stats", () => {
  it("counts Run calls and reports each turn", async () => {
    const emulator = await startEmulator();
    try {
      const token = emulator.issueTokens().accessToken;
      await driveRun(agentClient(emulator.url, token), runRequest("hi"), new BlobStore());
      await driveRun(agentClient(emulator.url, token), runRequest("hello"), new BlobStore());
      const body = (await (await fetch(`${emulator.url}/emulator/stats`)).json()) as {
        runs: number;
        turns: { transport: string; outcome: string; requestBytes: number }[];
      };
      expect(body.runs).toBe(2);
      expect(body.turns.map((turn) => [turn.transport, turn.outcome])).toEqual([
        ["http2", "completed"],
        ["http2", "completed"],
      ]);
      expect(body.turns.every((turn) => turn.requestBytes > 0)).toBe(true);
    } finally {
      await emulator.close();
    }
  });
});
