/**
 * The installed entry points: `bin/cursor-bridge.js` (what `npm start` and `npx cursor-bridge` run) starts, serves
 * (the API and /metrics, from dist/ as built), and exits cleanly on SIGTERM; `--version` and `--help` work from a real
 * process.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { listeningOrigin } from "../support/processes.js";

const BIN = fileURLToPath(new URL("../../bin/cursor-bridge.js", import.meta.url));
const pkg = (await import("../../package.json", { with: { type: "json" } })).default as {
  version: string;
  scripts: Record<string, string>;
};

function isolatedEnv() {
  const home = mkdtempSync(join(tmpdir(), "cursor-bridge-bin-"));
  return {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: join(home, "c"),
    XDG_DATA_HOME: join(home, "d"),
    NO_COLOR: "1",
  };
}

describe("bin/cursor-bridge.js", () => {
  it("prints the version and help", () => {
    const version = spawnSync(process.execPath, [BIN, "--version"], { encoding: "utf8", env: isolatedEnv() });
    expect(version.status).toBe(0);
    expect(version.stdout.trim()).toBe(pkg.version);
    const help = spawnSync(process.execPath, [BIN, "--help"], { encoding: "utf8", env: isolatedEnv() });
    expect(help.stdout).toMatch(/serve\s+Run the OpenAI-compatible server/);
    expect(help.stdout).toMatch(/login/);
    const unknown = spawnSync(process.execPath, [BIN, "frobnicate"], { encoding: "utf8", env: isolatedEnv() });
    expect(unknown.status).toBe(2);
  });

  it("is what npm start runs, serves the API, and exits 0 on SIGTERM", async () => {
    expect(pkg.scripts.start).toBe("node bin/cursor-bridge.js serve");
    const child = spawn(process.execPath, [BIN, "serve", "--port", "0", "--json", "--log-level", "warn"], {
      env: isolatedEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    const line = await new Promise<string>((resolve, reject) => {
      let buffer = "";
      child.stdout.on("data", (chunk: Buffer) => {
        buffer += chunk.toString();
        if (buffer.includes("\n")) resolve(buffer.split("\n")[0] ?? "");
      });
      child.once("exit", (code) => reject(new Error(`exited early with ${code}`)));
    });
    const started = JSON.parse(line) as { url: string; upstream: string };
    expect(started.upstream).toBe("emulator");
    // Sent the instant the line appears, while the API may still be loading: held, then answered by the API.
    const [res, models] = await Promise.all([
      fetch(`${started.url}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "auto", messages: [{ role: "user", content: "from a real process" }] }),
      }),
      fetch(`${started.url}/models`),
    ]);
    expect(
      ((await res.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content,
    ).toBe("You said: from a real process");
    expect(models.status).toBe(200);
    const list = (await models.json()) as { data: Array<{ owned_by: string }> };
    expect(list.data.length).toBeGreaterThan(0);
    expect(new Set(list.data.map((m) => m.owned_by))).toEqual(new Set(["cursor-emulator"]));
    // The process metrics start on the first scrape and have values from the second on; in dist/, prom-client's
    // OpenTelemetry import is the few lines of tools/build.mjs (noOpenTelemetrySdk), which must keep them working.
    const origin = new URL(started.url).origin;
    expect((await fetch(`${origin}/metrics`)).status).toBe(200);
    const metrics = await (await fetch(`${origin}/metrics`)).text();
    expect(metrics).toMatch(/^cursor_bridge_process_cpu_user_seconds_total \d/m);
    expect(metrics).toMatch(/^cursor_bridge_requests_total\{surface="chat",status="200",model="[^"]+",key=""\} 1$/m);
    const exit = new Promise<number | null>((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    expect(await exit).toBe(0);
  });

  it("runs the emulator alone from the CLI", async () => {
    const child = spawn(process.execPath, [BIN, "emulator", "--port", "0"], {
      env: isolatedEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    const url = await listeningOrigin(child, "serve");
    expect((await fetch(`${url}/auth/poll?uuid=x&verifier=y`)).status).toBe(404);
    const exit = new Promise<number | null>((resolve) => child.once("exit", resolve));
    child.kill("SIGINT");
    expect(await exit).toBe(0);
  });
});
