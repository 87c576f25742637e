/**
 * Commands that talk to Cursor say where they tried and why it failed when Cursor cannot be reached (a loopback
 * port nothing listens on stands in for an unreachable Cursor), instead of a bare "could not reach Cursor".
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { closedPort } from "../support/processes.js";
import { type CliHarness, createCliHarness, issueTokens, writeStoredCredentials } from "./harness.js";

let harness: CliHarness;
let closed: string;
beforeEach(async () => {
  harness = await createCliHarness();
  closed = await closedPortUrl();
});
afterEach(async () => {
  await harness.close();
});

describe("Cursor unreachable", () => {
  it("models and usage name the URL and the cause", async () => {
    writeStoredCredentials(harness, { ...issueTokens(harness, { email: "far@example.com" }) });
    const env = { CURSOR_API_URL: closed, CURSOR_AGENT_URL: closed };
    for (const command of ["models", "usage"]) {
      const result = await harness.run([command], { env });
      expect(result.code, command).toBe(4);
      expect(result.err, command).toContain(`Could not reach Cursor at ${closed}`);
      expect(result.err, command).toContain("ECONNREFUSED");
    }
  });

  it("login with an API key names the URL and the cause", async () => {
    const result = await harness.run(["login", "--api-key"], {
      env: { CURSOR_API_URL: closed, CURSOR_API_KEY: "cur_unreachable_key_1234" },
    });
    harness.secrets.add("cur_unreachable_key_1234");
    expect(result.code).toBe(4);
    expect(result.err).toContain(`could not reach Cursor at ${closed} (ECONNREFUSED)`);
  });
});

/** A loopback URL nothing listens on. */
async function closedPortUrl(): Promise<string> {
  return `http://127.0.0.1:${await closedPort()}`;
}
