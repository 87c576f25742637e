/**
 * The emulator `serve` embeds (what `npm start` serves before a login) answers loopback host names only: only serve
 * itself calls it, by its 127.0.0.1 URL, and a web page that points a name of its own at 127.0.0.1 (DNS rebinding)
 * sends that name as `Host` and gets a 421, on the Connect routes and the emulator's own pages alike. The standalone
 * emulator answers any name (clients in containers and on other machines reach it by theirs).
 */
import { request } from "node:http";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningBridge, startBridge } from "../../src/cli/serve.js";
import { startEmulator } from "../../src/emulator/index.js";
import { type CliHarness, captureIo, createCliHarness } from "./harness.js";

/** `method path` on `base` with the given Host header: its status. */
function statusWithHost(base: string, path: string, host: string, method = "GET"): Promise<number> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: { host, "content-type": "application/json" } }, (res) => {
      res.resume();
      res.once("end", () => resolve(res.statusCode ?? 0));
    });
    req.once("error", reject);
    req.end(method === "POST" ? "{}" : undefined);
  });
}

describe("the embedded emulator's host names", () => {
  let harness: CliHarness;
  let bridge: RunningBridge;
  beforeAll(async () => {
    harness = await createCliHarness();
    const { io } = captureIo(harness.env);
    ({ bridge } = await startBridge(io, ["--port", "0", "--upstream", "emulator", "--log-level", "silent"]));
    await bridge.ready;
  });
  afterAll(async () => {
    await bridge?.close();
    await harness?.close();
  });

  it("refuses a foreign Host with 421, answers loopback names, and serves the bridge's own turns", async () => {
    const base = bridge.upstream.agentUrl;
    const port = new URL(base).port;
    expect(new URL(base).hostname).toBe("127.0.0.1");
    for (const path of ["/emulator/stats", "/agent.v1.AgentService/GetUsableModels"]) {
      const method = path.startsWith("/agent") ? "POST" : "GET";
      expect(await statusWithHost(base, path, `rebound.example:${port}`, method)).toBe(421);
      expect(await statusWithHost(base, path, `127.0.0.1.nip.io:${port}`, method)).toBe(421);
    }
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`]) {
      expect(await statusWithHost(base, "/emulator/stats", host)).toBe(200);
    }
    const client = new OpenAI({ baseURL: `${bridge.server.url}/v1`, apiKey: "x", maxRetries: 0 });
    const answer = await client.chat.completions.create({
      model: "auto",
      messages: [{ role: "user", content: "say hi" }],
    });
    expect(answer.choices[0]?.message.content).toBeTruthy();
  });

  it("the standalone emulator answers any host name", async () => {
    const emulator = await startEmulator();
    try {
      const port = new URL(emulator.url).port;
      expect(await statusWithHost(emulator.url, "/emulator/stats", `cursor-emulator:${port}`)).toBe(200);
    } finally {
      await emulator.close();
    }
  });
});
