/**
 * Small things an operator meets first: option errors that name the option and say what is wrong, port clashes said
 * in words with exit 2, where `keys create` stored the key, and what the banner and a JSON log say about the
 * emulator when it serves.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type RunningBridge, startBridge } from "../../src/cli/serve.js";
import { type CliHarness, captureIo, createCliHarness, issueTokens, writeStoredCredentials } from "./harness.js";

let harness: CliHarness;
let bridge: RunningBridge | undefined;
beforeEach(async () => {
  harness = await createCliHarness();
});
afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
  await harness.close();
});

describe("option errors", () => {
  it("a negative number says the value cannot be negative, naming the option", async () => {
    for (const [argv, flag] of [
      [["keys", "create", "--name", "k", "--rpm", "-5"], "--rpm -5"],
      [["keys", "create", "--name", "k", "--budget", "-1/day"], "--budget -1/day"],
      [["audit", "--limit", "-1"], "--limit -1"],
    ] as const) {
      const result = await harness.run([...argv]);
      expect(result.code, flag).toBe(2);
      expect(result.err, flag).toContain(`${flag}: the value cannot be negative.`);
      expect(result.err, flag).not.toContain("ambiguous");
    }
  });

  it("emulator names an unknown option and says a taken port as serve does, exit 2", async () => {
    const unknown = await harness.run(["emulator", "--bogus"]);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain("Unknown option '--bogus'. Run `cursor-bridge emulator --help` for its options.");
    const port = new URL(harness.emulator.url).port;
    const taken = await harness.run(["emulator", "--port", port]);
    expect(taken.code).toBe(2);
    expect(taken.err).toContain(`Port ${port} on 127.0.0.1 is already in use. Pick another with --port.`);
    expect(taken.err).not.toContain("listen EADDRINUSE");
  });

  it("serve says --port and --emulator-port clash", async () => {
    const result = await harness.run(["serve", "--port", "18977", "--emulator-port", "18977"]);
    expect(result.code).toBe(2);
    expect(result.err).toContain("--port and --emulator-port are both 18977");
  });

  it("setup's error names every client and editor", async () => {
    const result = await harness.run(["setup", "bogus"]);
    expect(result.code).toBe(2);
    expect(result.err).toContain("zed, jetbrains, neovim");
  });
});

describe("keys create", () => {
  it("says which store it wrote the key to", async () => {
    const human = await harness.run(["keys", "create", "--name", "laptop"]);
    expect(human.code, human.err).toBe(0);
    harness.secrets.add(/cbk-[A-Za-z0-9_-]+/.exec(human.out)?.[0] ?? "");
    expect(human.out).toMatch(/Store\s+\S*keys\.json/);
    const json = await harness.run(["keys", "create", "--name", "phone", "--json"]);
    const body = JSON.parse(json.out) as { key: string; location: string };
    harness.secrets.add(body.key);
    expect(body.location).toMatch(/keys\.json$/);
  });
});

describe("serve with the emulator", () => {
  it("--upstream emulator while logged in: the banner does not ask for a login", async () => {
    writeStoredCredentials(harness, { ...issueTokens(harness, { email: "in@example.com" }) });
    const { io, out } = captureIo(harness.env);
    ({ bridge } = await startBridge(io, ["--port", "0", "--upstream", "emulator", "--log-level", "silent"]));
    expect(out.join("")).toContain("Chosen by --upstream emulator");
    expect(out.join("")).not.toContain("Run `cursor-bridge login`, then restart");
  });

  it("--log-format json logs a warning that the upstream is the emulator", async () => {
    const { io, err } = captureIo(harness.env);
    ({ bridge } = await startBridge(io, ["--port", "0", "--log-format", "json"]));
    const lines = err
      .join("")
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as { level?: string; msg?: string; message?: string });
    const warning = lines.find((line) => (line.msg ?? line.message ?? "").includes("UPSTREAM: CURSOR EMULATOR"));
    expect(warning, err.join("")).toBeDefined();
    expect(warning?.level).toBe("warn");
  });
});
