/**
 * The conversation index survives a crash: a real `cursor-bridge serve` process (Cursor upstream = the emulator
 * running in this test) answers a turn and is killed with SIGKILL right after the response; a new process on the
 * same data directory continues the conversation from its checkpoint, so the emulator receives only the new
 * message, not the history.
 */
import { type ChildProcessByStdio, spawn } from "node:child_process";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { type CliHarness, createCliHarness } from "./harness.js";

const BIN = fileURLToPath(new URL("../../bin/cursor-bridge.js", import.meta.url));

type Child = ChildProcessByStdio<null, Readable, Readable>;

const open: Array<{ child?: Child; harness?: CliHarness }> = [];
afterEach(async () => {
  for (const item of open.splice(0)) {
    if (item.child && item.child.exitCode === null && item.child.signalCode === null) item.child.kill("SIGKILL");
    await item.harness?.close();
  }
});

/** Starts `cursor-bridge serve` and resolves with its URL and a view of its log. */
async function serve(
  env: Record<string, string | undefined>,
): Promise<{ child: Child; url: string; log: () => string }> {
  const child = spawn(process.execPath, [BIN, "serve", "--port", "0", "--json", "--log-level", "info"], {
    env: { ...env, NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  open.push({ child });
  let err = "";
  child.stderr.on("data", (chunk: Buffer) => {
    err += chunk.toString();
  });
  const line = await new Promise<string>((resolve, reject) => {
    let buffer = "";
    child.stdout.on("data", (chunk: Buffer) => {
      buffer += chunk.toString();
      if (buffer.includes("\n")) resolve(buffer.split("\n")[0] ?? "");
    });
    child.once("exit", (code) => reject(new Error(`exited early with ${code}: ${err}`)));
  });
  const started = JSON.parse(line) as { url: string; upstream: string };
  expect(started.upstream).toBe("cursor");
  return { child, url: started.url, log: () => err };
}

async function kill9(child: Child): Promise<void> {
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once("exit", (_code, signal) => resolve(signal)),
  );
  child.kill("SIGKILL");
  expect(await exited).toBe("SIGKILL");
}

describe("durable conversation index", () => {
  it("continues from the checkpoint after kill -9 and a restart on the same data directory", async () => {
    const harness = await createCliHarness();
    open.push({ harness });
    harness.emulator.addApiKey("cur_test_key_durable", { email: "dev@example.com" });
    const login = await harness.run(["login", "--api-key"], { env: { CURSOR_API_KEY: "cur_test_key_durable" } });
    expect(login.code).toBe(0);

    const padding = "otters hold hands while they sleep. ".repeat(150);
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: "system", content: "Be brief." },
      { role: "user", content: `Remember otters. ${padding}` },
    ];
    const first = await serve(harness.env);
    const client1 = new OpenAI({ baseURL: first.url, apiKey: "x", maxRetries: 0 });
    const reply = await client1.chat.completions.create({ model: "auto", messages });
    await kill9(first.child);
    const firstTurn = harness.emulator.stats().turns.at(-1);
    expect(firstTurn?.requestBytes).toBeGreaterThan(padding.length);

    harness.emulator.resetStats();
    const second = await serve(harness.env);
    const client2 = new OpenAI({ baseURL: second.url, apiKey: "x", maxRetries: 0 });
    messages.push({ role: "assistant", content: reply.choices[0]?.message.content ?? "" });
    messages.push({ role: "user", content: "[[emu:recall]] what came first?" });
    const recall = await client2.chat.completions.create({ model: "auto", messages });
    expect(recall.choices[0]?.message.content).toContain("First message: Remember otters.");
    const turns = harness.emulator.stats().turns;
    expect(turns).toHaveLength(1);
    expect(turns[0]?.conversationId).toBe(firstTurn?.conversationId);
    // Only the new message and the checkpoint went up, not the history.
    expect(turns[0]?.requestBytes).toBeLessThan(padding.length / 2);
    await expect.poll(() => second.log()).toMatch(/POST \/v1\/chat\/completions 200.*turn=continued/);
  });
});
