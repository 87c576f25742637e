/**
 * curl reading the raw SSE stream of `cursor-bridge serve` (`curl -sSN`), compared byte for byte with golden files.
 * Normalisation (the only difference allowed): completion ids `chatcmpl-<hex>` → `chatcmpl-ID`, tool call ids
 * `call_<id>` → `call_ID`, and `"created":<seconds>` → `"created":0`. Set UPDATE_GOLDEN=1 to rewrite the files.
 */
import { execFile, execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { useServedBridge } from "./support/served-bridge.js";

const FIXTURES = fileURLToPath(new URL("../fixtures/", import.meta.url));

function curlVersion(): string | undefined {
  try {
    return execFileSync("curl", ["--version"], { encoding: "utf8" }).split("\n")[0];
  } catch {
    return undefined;
  }
}

const version = curlVersion();
if (version === undefined) console.log("skipping the curl end-to-end tests: no `curl` on PATH");

/** Replaces what differs per run; documented in the file header. */
export function normaliseSse(raw: string): string {
  return raw
    .replace(/chatcmpl-[A-Za-z0-9]+/g, "chatcmpl-ID")
    .replace(/call_[A-Za-z0-9_-]+/g, "call_ID")
    .replace(/"created":\d+/g, '"created":0');
}

describe.skipIf(version === undefined)("curl -sSN → cursor-bridge serve → emulator", () => {
  const bridge = useServedBridge("curl");

  async function curl(body: unknown): Promise<string> {
    // -q: ignore any .curlrc (the temporary HOME has none anyway); -N: no buffering, as a user watching a stream.
    const args = [
      "-q",
      "-sSN",
      `${bridge.baseURL}/chat/completions`,
      "-H",
      "content-type: application/json",
      "-d",
      JSON.stringify(body),
    ];
    const { stdout } = await promisify(execFile)("curl", args, { env: bridge.home.env, encoding: "utf8" });
    return stdout;
  }

  function expectGolden(name: string, raw: string): void {
    const path = `${FIXTURES}${name}`;
    const actual = normaliseSse(raw);
    if (process.env.UPDATE_GOLDEN === "1") writeFileSync(path, actual);
    expect(existsSync(path), `${path} is missing: run with UPDATE_GOLDEN=1 to create it`).toBe(true);
    expect(actual).toBe(readFileSync(path, "utf8"));
  }

  it("streams text, finish_reason, usage and [DONE] in the golden framing", async () => {
    const raw = await curl({
      model: "auto",
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: "user", content: "Hello from curl" }],
    });
    expect(raw.endsWith("data: [DONE]\n\n")).toBe(true);
    expectGolden("e2e-curl-text.sse", raw);
  });

  it("streams a tool call in the golden framing", async () => {
    const raw = await curl({
      model: "auto",
      stream: true,
      messages: [{ role: "user", content: 'List it [[emu:tool glob {"pattern":"src/**/*.ts"}]]' }],
      tools: [
        {
          type: "function",
          function: {
            name: "glob",
            description: "Find files",
            parameters: { type: "object", properties: { pattern: { type: "string" } } },
          },
        },
      ],
    });
    expectGolden("e2e-curl-tool-call.sse", raw);
  });
});
