/**
 * `agent.json`, the repository's entry for the ACP registry: valid against the registry's published schema
 * (vendored in fixtures/registry with its source), at the package's version, and announcing the same
 * `authMethods` that `cursor-bridge acp` answers `initialize` with.
 */
import { readFileSync } from "node:fs";
import { PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import { Ajv } from "ajv";
import addFormatsModule from "ajv-formats";
import { describe, expect, it } from "vitest";
import { createTempHome } from "../e2e/support/served-bridge.js";
import { connectEditor, spawnAcp } from "./agent-process.js";

const ROOT = new URL("../../", import.meta.url);
const readJson = (url: URL) => JSON.parse(readFileSync(url, "utf8")) as Record<string, unknown>;
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

describe("agent.json for the ACP registry", () => {
  const entry = readJson(new URL("agent.json", ROOT));

  it("validates against the registry's schema and names the package's version", () => {
    const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));
    const validate = ajv.compile(readJson(new URL("./fixtures/registry/agent.schema.json", import.meta.url)));
    expect(validate(entry), ajv.errorsText(validate.errors)).toBe(true);
    const pkg = readJson(new URL("package.json", ROOT));
    expect(entry.version).toBe(pkg.version);
    expect(entry.distribution).toEqual({ npx: { package: `${pkg.name}@${pkg.version}`, args: ["acp"] } });
    // The schema refuses what it does not know where it is strict: a wrong entry fails.
    expect(validate({ ...entry, id: "Cursor Bridge" })).toBe(false);
  });

  it("announces the auth methods initialize answers with", { timeout: 60_000 }, async () => {
    const home = createTempHome("acp-registry");
    const agent = spawnAcp(["--upstream", "emulator", "--log-level", "warn"], {
      cwd: home.dir,
      env: home.env,
      rawStdout: false,
      stderr: "inherit",
    });
    try {
      const { connection } = connectEditor(agent, "registry-test");
      const init = await connection.agent.request("initialize", {
        protocolVersion: PROTOCOL_VERSION,
        clientCapabilities: {},
      });
      expect(entry.authMethods).toEqual(init.authMethods);
      expect(init.agentInfo?.version).toBe(entry.version);
    } finally {
      await agent.stop();
      home.remove();
    }
  });
});
