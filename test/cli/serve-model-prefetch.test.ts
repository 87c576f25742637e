/**
 * `serve` fetches the model list once its upstream is built, before any client asks (cli/serve-runtime.ts), through
 * the cached, single-flight catalogue the first turn reads: the first turn makes no second request, and a fetch that
 * fails leaves the server healthy and the first turn fetching the list itself. The emulator counts the model list's
 * two RPCs (`usableModelsCalls`, `availableModelsCalls` in its stats).
 */
import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { type RunningBridge, startBridge } from "../../src/cli/serve.js";
import type { EmulatorStats } from "../../src/emulator/index.js";
import { type CliHarness, captureIo, createCliHarness } from "./harness.js";

const open: Array<{ bridge?: RunningBridge; harness?: CliHarness; server?: Server }> = [];
afterEach(async () => {
  for (const item of open.splice(0)) {
    await item.bridge?.close();
    await item.harness?.close();
    await new Promise<void>((resolve) => (item.server === undefined ? resolve() : item.server.close(() => resolve())));
  }
});

/** Polls until `check` holds (generous: the machine may be loaded). */
async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const modelCalls = (stats: EmulatorStats) => ({
  usable: stats.usableModelsCalls,
  available: stats.availableModelsCalls,
});

async function embeddedStats(bridge: RunningBridge): Promise<EmulatorStats> {
  return (await (await fetch(`${bridge.upstream.agentUrl}/emulator/stats`)).json()) as EmulatorStats;
}

async function logIn(harness: CliHarness): Promise<void> {
  harness.emulator.addApiKey("cur_prefetch_key_123456", { email: "dev@example.com" });
  const login = await harness.run(["login", "--api-key"], { env: { CURSOR_API_KEY: "cur_prefetch_key_123456" } });
  expect(login.code).toBe(0);
}

function chat(bridge: RunningBridge, content: string) {
  const client = new OpenAI({ baseURL: `${bridge.server.url}/v1`, apiKey: "x", maxRetries: 0 });
  return client.chat.completions.create({ model: "auto", messages: [{ role: "user", content }] });
}

/**
 * A TCP relay in front of the emulator for the unary RPCs (`CURSOR_API_URL`; the Runs go to the emulator directly):
 * until `up()`, it holds every connection (`hold`: paused, passed on at `up()`) or drops it (`drop`).
 */
async function unaryRelay(
  harness: CliHarness,
  whileDown: "hold" | "drop",
): Promise<{ env: Record<string, string>; held(): number; up(): void }> {
  const emulatorPort = Number(new URL(harness.emulator.url).port);
  const held: Socket[] = [];
  let isUp = false;
  const pass = (socket: Socket) => {
    const target = tcpConnect(emulatorPort, "127.0.0.1");
    socket.on("error", () => target.destroy());
    target.on("error", () => socket.destroy());
    socket.pipe(target).pipe(socket);
  };
  const relay = createServer((socket: Socket) => {
    if (isUp) pass(socket);
    else if (whileDown === "drop") socket.destroy();
    else {
      socket.pause();
      held.push(socket);
    }
  });
  open.push({ server: relay });
  await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", () => resolve()));
  const address = relay.address();
  if (address === null || typeof address === "string") throw new Error("relay has no port");
  return {
    env: { ...harness.env, CURSOR_API_URL: `http://127.0.0.1:${address.port}`, CURSOR_AGENT_URL: harness.emulator.url },
    held: () => held.length,
    up() {
      isUp = true;
      for (const socket of held.splice(0)) {
        pass(socket);
        socket.resume();
      }
    },
  };
}

describe("serve fetches the model list at start", () => {
  it("embedded emulator: one model list request without any client request, none more for the first turn", async () => {
    const harness = await createCliHarness();
    open.push({ harness });
    const { io } = captureIo(harness.env);
    const { bridge } = await startBridge(io, ["--port", "0", "--emulator-port", "0", "--log-level", "silent"]);
    open.push({ bridge });
    expect(bridge.upstream.kind).toBe("emulator");
    await bridge.ready;
    await until(async () => (await embeddedStats(bridge)).usableModelsCalls >= 1, "the model list at start");
    await until(async () => (await embeddedStats(bridge)).availableModelsCalls >= 1, "AvailableModels at start");
    expect(modelCalls(await embeddedStats(bridge))).toEqual({ usable: 1, available: 1 });
    const reply = await chat(bridge, "ping");
    expect(reply.choices[0]?.message.content).toBe("You said: ping");
    const stats = await embeddedStats(bridge);
    expect(stats.runStreams).toBe(1);
    expect(modelCalls(stats)).toEqual({ usable: 1, available: 1 });
  });

  it("a turn sent the instant serve listens joins the fetch in flight instead of starting another", async () => {
    const harness = await createCliHarness();
    open.push({ harness });
    await logIn(harness);
    const { io } = captureIo(harness.env);
    let early: Promise<OpenAI.Chat.Completions.ChatCompletion> | undefined;
    const { bridge } = await startBridge(io, ["--port", "0", "--log-level", "silent"], undefined, (url) => {
      const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: "x", maxRetries: 0 });
      early = client.chat.completions.create({ model: "auto", messages: [{ role: "user", content: "early" }] });
    });
    open.push({ bridge });
    expect(bridge.upstream.kind).toBe("cursor");
    if (early === undefined) throw new Error("onListening did not run");
    expect((await early).choices[0]?.message.content).toBe("You said: early");
    expect((await chat(bridge, "later")).choices[0]?.message.content).toBe("You said: later");
    expect(modelCalls(harness.emulator.stats())).toEqual({ usable: 1, available: 1 });
  });

  it("a first turn sent while the fetch at start waits for Cursor makes no second request", async () => {
    const harness = await createCliHarness();
    open.push({ harness });
    await logIn(harness);
    harness.emulator.resetStats();
    // The unary RPCs' URL goes through a relay that holds every connection until released: the fetch stays in flight.
    const relay = await unaryRelay(harness, "hold");
    const { io } = captureIo(relay.env);
    const { bridge } = await startBridge(io, ["--port", "0", "--log-level", "silent"]);
    open.push({ bridge });
    await until(() => relay.held() >= 1, "the fetch at start to reach the relay");
    const answer = chat(bridge, "while fetching");
    // Whether the turn joined the fetch in flight or reads its answer, the emulator sees one list request.
    await new Promise((resolve) => setTimeout(resolve, 300));
    relay.up();
    expect((await answer).choices[0]?.message.content).toBe("You said: while fetching");
    expect(modelCalls(harness.emulator.stats())).toEqual({ usable: 1, available: 1 });
  });

  it("logged in: the default account's list is fetched once at start and the first turn reads it", async () => {
    const harness = await createCliHarness();
    open.push({ harness });
    await logIn(harness);
    harness.emulator.resetStats();
    const { io } = captureIo(harness.env);
    const { bridge } = await startBridge(io, ["--port", "0", "--log-level", "silent"]);
    open.push({ bridge });
    await until(() => harness.emulator.stats().availableModelsCalls >= 1, "the model list at start");
    await until(() => harness.emulator.stats().usableModelsCalls >= 1, "GetUsableModels at start");
    expect(harness.emulator.stats().runStreams).toBe(0);
    expect((await chat(bridge, "hi")).choices[0]?.message.content).toBe("You said: hi");
    expect(modelCalls(harness.emulator.stats())).toEqual({ usable: 1, available: 1 });
  });

  it("a failed fetch at start leaves serve healthy, logs no error, and the first turn fetches the list itself", async () => {
    const harness = await createCliHarness();
    open.push({ harness });
    await logIn(harness);
    // The unary RPCs' URL (the model list's) goes through a TCP relay that drops every connection until it is up:
    // Cursor unreachable at start. The Runs go to the emulator directly.
    const relay = await unaryRelay(harness, "drop");
    const { io, err } = captureIo(relay.env);
    const { bridge } = await startBridge(io, ["--port", "0", "--log-level", "debug"]);
    open.push({ bridge });
    await until(() => err.join("").includes("model list not fetched at start"), `the debug line in ${err.join("")}`);
    const log = err.join("");
    expect(log).not.toMatch(/\bERROR\b/);
    expect(log).not.toMatch(/\bWARN\b.*model list/);
    const health = await fetch(`${bridge.server.url}/health`);
    expect(health.status).toBe(200);
    expect(modelCalls(harness.emulator.stats())).toEqual({ usable: 0, available: expect.any(Number) });
    relay.up();
    expect((await chat(bridge, "after")).choices[0]?.message.content).toBe("You said: after");
    expect(harness.emulator.stats().usableModelsCalls).toBe(1);
  });
});
