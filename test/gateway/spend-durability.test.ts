/**
 * A virtual key's spend as a real `cursor-bridge serve` process (bin/cursor-bridge.js, the embedded emulator, the
 * file store) keeps it across a stop: what was spent just before a clean stop (SIGTERM) is there after a restart on
 * the same data directory, requests cut at the stop included; and a crash (SIGKILL) mid-answer still bills that answer
 * at least what spend.json recorded of it while it ran. Read back through the admin API (`usage` of
 * GET /admin/keys/NAME). No timing is asserted: each wait is for an event, with generous limits.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { listeningOrigin } from "../support/processes.js";

const BIN = fileURLToPath(new URL("../../bin/cursor-bridge.js", import.meta.url));
const ADMIN = "admin-key-for-the-spend-test-0123";

interface Serve {
  child: ChildProcess;
  origin: string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
}

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

function envOf(home: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: join(home, "c"),
    XDG_DATA_HOME: join(home, "d"),
    CURSOR_BRIDGE_LOG_LEVEL: "info",
    NO_COLOR: "1",
  };
}

async function startServe(home: string, drainMs = 5000): Promise<Serve> {
  const child = spawn(
    process.execPath,
    [
      BIN,
      "serve",
      "--port",
      "0",
      "--upstream",
      "emulator",
      "--admin-key",
      ADMIN,
      "--drain-timeout-ms",
      String(drainMs),
    ],
    { env: envOf(home), stdio: ["ignore", "pipe", "pipe"] },
  );
  children.push(child);
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const origin = await listeningOrigin(child, "serve", () => stderr);
  return { child, origin, exit, stderr: () => stderr };
}

const admin = (origin: string, path: string, init: RequestInit = {}) =>
  fetch(`${origin}/admin${path}`, {
    ...init,
    headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
  });

/** The key's usage this period as the admin API shows it. */
async function usageOf(origin: string, name: string): Promise<{ requests: number; spendUsd: number }> {
  const response = await admin(origin, `/keys/${name}`);
  expect(response.status).toBe(200);
  const body = (await response.json()) as { usage: { requests: number; spendUsd: number } | null };
  return body.usage ?? { requests: 0, spendUsd: 0 };
}

async function createKey(origin: string, name: string): Promise<string> {
  const response = await admin(origin, "/keys", {
    method: "POST",
    body: JSON.stringify({ name, budget: "100/month" }),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { key: string }).key;
}

/** Reads a streamed answer until `enough` of its text arrived, then goes away; resolves to the text read. */
async function readThenLeave(client: OpenAI, content: string, enough: number): Promise<string> {
  const controller = new AbortController();
  const stream = await client.chat.completions.create(
    { model: "gpt-4o", stream: true, messages: [{ role: "user", content }] },
    { signal: controller.signal },
  );
  let text = "";
  try {
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? "";
      if (text.length >= enough) break;
    }
  } finally {
    controller.abort();
  }
  return text;
}

describe("a key's spend across a stop of serve (file store)", () => {
  it("what was spent just before SIGTERM, a cut stream included, is there after a restart", {
    timeout: 120_000,
  }, async () => {
    const home = mkdtempSync(join(tmpdir(), "cursor-bridge-spend-"));
    const first = await startServe(home);
    const key = await createKey(first.origin, "ada");
    const client = new OpenAI({ baseURL: `${first.origin}/v1`, apiKey: key, maxRetries: 0 });
    const whole = await client.chat.completions
      .create({ model: "gpt-4o", messages: [{ role: "user", content: "hello [[emu:tokens 40]]" }] })
      .withResponse();
    const spentAfterJson = Number(whole.response.headers.get("x-cursor-bridge-spend"));
    expect(spentAfterJson).toBeGreaterThan(0);
    // A slow stream the client leaves mid-answer: billed by estimate once the bridge sees it gone.
    await readThenLeave(client, "slowly [[emu:tokens 400]] [[emu:rate 40]]", 40);
    first.child.kill("SIGTERM");
    expect(await first.exit).toEqual({ code: 0, signal: null });

    const second = await startServe(home);
    const usage = await usageOf(second.origin, "ada");
    expect(usage.requests, second.stderr()).toBe(2);
    expect(usage.spendUsd).toBeGreaterThan(spentAfterJson);
    second.child.kill("SIGTERM");
    await second.exit;
  });

  it("a stream still running at SIGTERM, ended by the drain's end, is billed after a restart", {
    timeout: 120_000,
  }, async () => {
    const home = mkdtempSync(join(tmpdir(), "cursor-bridge-spend-"));
    const first = await startServe(home, 0);
    const key = await createKey(first.origin, "bo");
    const client = new OpenAI({ baseURL: `${first.origin}/v1`, apiKey: key, maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: "gpt-4o",
      stream: true,
      messages: [{ role: "user", content: "slowly [[emu:tokens 400]] [[emu:rate 40]]" }],
    });
    let text = "";
    const reading = (async () => {
      try {
        for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
      } catch {}
    })();
    while (text.length < 40) await new Promise((resolve) => setTimeout(resolve, 20));
    first.child.kill("SIGTERM");
    await reading;
    expect(await first.exit).toEqual({ code: 0, signal: null });

    const second = await startServe(home);
    const usage = await usageOf(second.origin, "bo");
    expect(usage.requests, second.stderr()).toBe(1);
    expect(usage.spendUsd).toBeGreaterThan(0);
    second.child.kill("SIGTERM");
    await second.exit;
  });

  it("a crash (SIGKILL) mid-answer: the restart charges at least the running cost spend.json recorded", {
    timeout: 120_000,
  }, async () => {
    const home = mkdtempSync(join(tmpdir(), "cursor-bridge-spend-"));
    const first = await startServe(home);
    const key = await createKey(first.origin, "cy");
    const client = new OpenAI({ baseURL: `${first.origin}/v1`, apiKey: key, maxRetries: 0 });
    // About 25 s of answer at 40 tokens a second (docs/emulator.md): still running when the process is killed.
    const stream = await client.chat.completions.create({
      model: "gpt-4o",
      stream: true,
      messages: [{ role: "user", content: "slowly [[emu:tokens 1000]] [[emu:rate 40]]" }],
    });
    let text = "";
    const reading = (async () => {
      try {
        for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
      } catch {}
    })();
    // The running request's cost as recorded in the spend file while it runs (written every 2 s while some run).
    const spendFile = join(home, "d", "cursor-bridge", "emulator", "spend.json");
    const recorded = (): number => {
      try {
        const file = JSON.parse(readFileSync(spendFile, "utf8")) as { running?: Record<string, { microUsd: number }> };
        return Object.values(file.running ?? {}).reduce((sum, each) => sum + each.microUsd, 0);
      } catch {
        return 0;
      }
    };
    const deadline = Date.now() + 60_000;
    while (recorded() === 0) {
      if (Date.now() > deadline)
        throw new Error(`no running cost recorded in ${spendFile}; read: ${text.length} chars`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const before = recorded();
    first.child.kill("SIGKILL");
    expect((await first.exit).signal).toBe("SIGKILL");
    await reading;

    const second = await startServe(home);
    const usage = await usageOf(second.origin, "cy");
    expect(usage.requests, second.stderr()).toBe(1);
    expect(Math.round(usage.spendUsd * 1_000_000)).toBeGreaterThanOrEqual(before);
    expect(second.stderr()).toContain("charged the requests that were running");
    second.child.kill("SIGTERM");
    await second.exit;
  });
});
