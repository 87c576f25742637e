/**
 * A secret given as a flag stands in the command line every local user can read (`ps`): serve warns, names the
 * variable to use instead, and never prints the secret. Nor does the CLI echo an argument given where a command name
 * belongs (`cursor-bridge --api-key=… serve`).
 */
import { describe, expect, it } from "vitest";
import type { CliIo } from "../../src/cli/io.js";
import { main } from "../../src/cli/main.js";
import { warnSecretFlags } from "../../src/cli/serve.js";
import { createLogger } from "../../src/util/logger.js";

function warnings(given: Record<string, unknown>): string[] {
  const lines: string[] = [];
  warnSecretFlags(given, createLogger({ level: "info", format: "text", sink: (line) => lines.push(line) }));
  return lines;
}

describe("secrets given as flags", () => {
  it("warns for each secret flag given, naming its variable and not its value", () => {
    const lines = warnings({ apiKey: "bridge-key-0123456789", clusterSecret: "cluster-secret-0123456789", port: "1" });
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain("--api-key on the command line is visible to every user of this machine");
    expect(lines[0]).toContain("CURSOR_BRIDGE_API_KEY");
    expect(lines[1]).toContain("--cluster-secret");
    expect(lines.join("\n")).not.toContain("0123456789");
  });

  it("says nothing when no secret came as a flag", () => {
    expect(warnings({ port: "1", host: "127.0.0.1" })).toEqual([]);
  });
});

describe("an argument where the command belongs", () => {
  async function run(args: string[]): Promise<{ code: number; text: string }> {
    let text = "";
    const io: CliIo = { out: (t) => (text += t), err: (t) => (text += t), isTty: false, env: {} };
    return { code: await main(args, io), text };
  }

  it("is not echoed when it is an option, which may carry a secret", async () => {
    const { code, text } = await run(["--api-key=crsr_0123456789abcdef", "serve"]);
    expect(code).toBe(2);
    expect(text).not.toContain("0123456789");
    expect(text).toContain("Options come after the command");
  });

  it("is not echoed when it does not look like a command name", async () => {
    const { code, text } = await run(["crsr_0123456789abcdef"]);
    expect(code).toBe(2);
    expect(text).not.toContain("0123456789");
  });

  it("names an unknown command word", async () => {
    const { code, text } = await run(["frobnicate"]);
    expect(code).toBe(2);
    expect(text).toContain('Unknown command "frobnicate"');
  });
});
