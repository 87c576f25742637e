import { defineConfig } from "vitest/config";

// Live tests against real Cursor; opt-in with CURSOR_LIVE=1 (see test/live/).
export default defineConfig({
  test: {
    include: ["test/live/**/*.test.ts"],
    globalSetup: ["test/support/sub-packages.setup.ts"],
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
