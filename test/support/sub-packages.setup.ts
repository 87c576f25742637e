/**
 * vitest global setup: installs the test-only client SDKs (test/package.json) and the code generator
 * (tools/gen/package.json) on first use, before any test file is collected, so tests can import `openai`, `ai`,
 * `@ai-sdk/openai-compatible` and `@anthropic-ai/sdk` by name (they resolve to test/node_modules). `npm test` has
 * already done this before its typecheck; this covers `npx vitest run <file>` on a fresh clone. It also rebuilds a
 * stale dist/ once, so the tests that start bin/cursor-bridge.js do not each find it stale.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

export default function setup(): void {
  const root = fileURLToPath(new URL("../../", import.meta.url));
  const result = spawnSync(process.execPath, ["tools/sub-packages.mjs", "test", "tools/gen"], {
    cwd: root,
    stdio: "inherit",
  });
  if (result.status !== 0) throw new Error("installing the test-only packages failed (see the output above)");
  const built = spawnSync(process.execPath, ["tools/build.mjs", "--if-stale"], { cwd: root, stdio: "inherit" });
  if (built.status !== 0) throw new Error("building dist/ failed (see the output above)");
}
