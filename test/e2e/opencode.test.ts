import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  OPENCODE_PERMISSION,
  OPENCODE_TIMEOUT_MS,
  openCodeRunArgs,
  providerBlockEnv,
  runOpenCode,
} from "./support/opencode.js";
import { useServedBridge } from "./support/served-bridge.js";
import { openCodeSkipReason } from "./support/test-clients.js";

const MAIN_MODEL = "composer-1";
const TITLE_MODEL = "claude-4.5-sonnet";

const reason = await openCodeSkipReason();
if (reason !== undefined) console.log(`skipping the OpenCode end-to-end test: ${reason}`);

describe.skipIf(reason !== undefined)("OpenCode → cursor-bridge serve → emulator", () => {
  const bridge = useServedBridge("opencode");

  it(
    "runs bash through OpenCode on one Cursor Run and answers with its output",
    async () => {
      const nonce = `nonce-${randomBytes(6).toString("hex")}`;
      const models = { [MAIN_MODEL]: {}, [TITLE_MODEL]: {} };
      const choice = { main: MAIN_MODEL, small: TITLE_MODEL };
      const env = await providerBlockEnv(bridge.home, bridge.baseURL, models, choice, {
        permission: OPENCODE_PERMISSION,
      });
      // One argument, as users type it: `opencode run` wraps an argument holding a space in quotes and writes each `"`
      // inside as `\"`; the emulator undoes that quoting. OpenCode 1.18's bash tool requires only `command`.
      const prompt = `Print the nonce [[emu:tool bash {"command":"echo ${nonce}"}]]`;
      bridge.emulator.resetStats();
      const result = await runOpenCode(openCodeRunArgs(`bridge/${MAIN_MODEL}`, [prompt]), {
        cwd: bridge.home.folder("project"),
        env,
      });
      const { events, diagnostics } = result;
      expect(result.code, diagnostics).toBe(0);

      const bash = events.find((e) => e.type === "tool_use" && e.part?.tool === "bash");
      expect(bash?.part?.state?.status, diagnostics).toBe("completed");
      expect(bash?.part?.state?.output).toContain(nonce);
      const texts = events.filter((e) => e.type === "text").map((e) => e.part?.text ?? "");
      expect(texts.join("\n"), diagnostics).toContain(`bash returned: ${nonce}`);
      const finishes = events.filter((e) => e.type === "step_finish").map((e) => e.part?.reason);
      expect(finishes).toEqual(["tool-calls", "stop"]);

      const turns = bridge.emulator.stats().turns;
      const mainRuns = turns.filter((t) => t.model === MAIN_MODEL);
      expect(mainRuns, JSON.stringify(turns)).toHaveLength(1);
      expect(mainRuns[0]?.outcome).toBe("completed");
      expect(turns.filter((t) => t.model !== MAIN_MODEL).every((t) => t.model === TITLE_MODEL)).toBe(true);
    },
    OPENCODE_TIMEOUT_MS + 30_000,
  );
});
