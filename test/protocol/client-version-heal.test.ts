/**
 * A client version that heals itself (cursor-protocol-addendum-3.md E1, E9, E13), against the emulator with a
 * minimum above the default: the first turn is refused with "Update Required", the bridge learns the current build
 * from the install script (`GET /install`), keeps it, and retries that turn once, which succeeds. GetServerConfig's
 * policy makes a start below the minimum learn it before any turn. A chosen version is never replaced.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAgentClient } from "../../src/backend/agent-client.js";
import type { BackendEvent } from "../../src/backend/types.js";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import {
  buildFromInstallScript,
  compareClientVersions,
  DEFAULT_CLIENT_VERSION,
  resolveClientVersion,
} from "../../src/protocol/cursor/client-version.js";
import { ClientVersionHealer } from "../../src/protocol/cursor/client-version-heal.js";
import { policyOf } from "../../src/protocol/cursor/client-version-policy.js";
import { createCursorApi } from "../../src/protocol/cursor/cursor-api.js";
import { createMemoryConversationStore } from "../../src/stores/memory/conversation-store.js";
import { silentLogger } from "../../src/util/logger.js";

const MINIMUM = "cli-2030.01.01-0000000";
let emulator: Emulator;
beforeAll(async () => {
  emulator = await startEmulator({ port: 0, minClientVersion: MINIMUM });
});
afterAll(async () => {
  await emulator.close();
});

function bridge(healer: ClientVersionHealer) {
  const token = emulator.issueTokens().accessToken;
  const tokenSource = { getAccessToken: async () => token, refreshAfterUnauthenticated: async () => token };
  const api = createCursorApi({
    agentUrl: emulator.url,
    apiUrl: emulator.url,
    getAccessToken: async () => token,
    clientVersion: () => healer.version,
    transport: "http2",
    logger: silentLogger,
  });
  const client = createAgentClient({
    api,
    tokenSource,
    conversationStore: createMemoryConversationStore(),
    logger: silentLogger,
    renewClientVersion: () => healer.heal("refused as outdated"),
  });
  return { api, client };
}

async function reply(client: ReturnType<typeof bridge>["client"]): Promise<string> {
  const turn = client.startTurn({
    model: "composer-1",
    conversationId: randomUUID(),
    newConversation: true,
    messages: [{ role: "user", content: "hello" }],
    tools: [],
  });
  const events: BackendEvent[] = [];
  for await (const event of turn.stream()) events.push(event);
  return events.map((e) => (e.type === "text-delta" ? e.text : "")).join("");
}

describe("client version that heals itself", () => {
  it("the default is the newest build seen; the install script's build is parsed as E9 says", async () => {
    expect(DEFAULT_CLIENT_VERSION).toBe("cli-2026.10.01-e373342");
    const script = await (await fetch(`${emulator.url}/install`)).text();
    const build = buildFromInstallScript(script);
    expect(build).toBe("cli-2030.01.02-e1e1e1e");
    expect(compareClientVersions(build ?? "", MINIMUM)).toBeGreaterThan(0);
    expect(buildFromInstallScript("no build here")).toBeUndefined();
  });

  it("a refused first turn learns the current build, keeps it and succeeds on its one retry", async () => {
    const kept: string[] = [];
    const healer = new ClientVersionHealer({
      initial: { version: DEFAULT_CLIENT_VERSION, source: "default" },
      installUrl: `${emulator.url}/install`,
      persist: async (version) => {
        kept.push(version);
      },
    });
    const { api, client } = bridge(healer);
    try {
      emulator.resetStats();
      expect(await reply(client)).toBe("You said: hello");
      expect(healer).toMatchObject({ version: "cli-2030.01.02-e1e1e1e", source: "learned" });
      expect(kept).toEqual(["cli-2030.01.02-e1e1e1e"]);
      // One failed Run (refused by the header check before any handler: not counted as a stream), one retried.
      expect(emulator.stats().runStreams).toBe(1);
      expect(emulator.stats().turns.map((turn) => turn.outcome)).toEqual(["completed"]);
    } finally {
      api.close();
    }
  });

  it("GetServerConfig's policy names the minimum; a start below it learns the build before any turn", async () => {
    const healer = new ClientVersionHealer({
      initial: { version: DEFAULT_CLIENT_VERSION, source: "default" },
      installUrl: `${emulator.url}/install`,
    });
    const { api } = bridge(healer);
    try {
      await healer.check(async () => policyOf(await (api.getServerConfig?.() ?? Promise.reject(new Error("none")))));
      expect(healer.policy).toMatchObject({ minSupported: MINIMUM, updateRequired: true });
      expect(healer.version).toBe("cli-2030.01.02-e1e1e1e");
    } finally {
      api.close();
    }
  });

  it("--client-version and the installed CLI's version win: they are never replaced", async () => {
    for (const source of ["config", "env", "cursor-agent"] as const) {
      const healer = new ClientVersionHealer({
        initial: { version: "cli-2026.01.17-d239e66", source },
        installUrl: `${emulator.url}/install`,
      });
      expect(await healer.heal("test")).toBe(false);
      expect(healer.version).toBe("cli-2026.01.17-d239e66");
    }
    // A configured refusal stays the outdated-client error naming the setting.
    const healer = new ClientVersionHealer({
      initial: { version: "cli-2026.01.17-d239e66", source: "config" },
      installUrl: `${emulator.url}/install`,
    });
    const { api, client } = bridge(healer);
    try {
      await expect(reply(client)).rejects.toMatchObject({ detail: "outdated_client" });
    } finally {
      api.close();
    }
  });

  it("a learned version is used at the next start before the default, never before a chosen one", () => {
    const none = { agentVersionsDir: "/nonexistent" };
    expect(resolveClientVersion({ ...none, learned: "cli-2030.01.02-e1e1e1e" })).toEqual({
      version: "cli-2030.01.02-e1e1e1e",
      source: "learned",
    });
    // An older learned version than the default is not used.
    expect(resolveClientVersion({ ...none, learned: "cli-2026.01.01-0000000" }).source).toBe("default");
    expect(
      resolveClientVersion({ ...none, configured: "cli-2026.01.17-d239e66", learned: "cli-2030.01.02-e1e1e1e" }),
    ).toEqual({ version: "cli-2026.01.17-d239e66", source: "config" });
  });
});
