import { defineConfig } from "vitest/config";

// CI (.ci/run) sets VITEST_JSON_OUTPUT so it can print its own "N passed, N failed" line from vitest's JSON report.
const jsonOutput = process.env.VITEST_JSON_OUTPUT;

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    exclude: ["test/live/**", "**/node_modules/**"],
    globalSetup: ["test/support/sub-packages.setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    reporters: jsonOutput ? ["default", "json"] : ["default"],
    ...(jsonOutput ? { outputFile: { json: jsonOutput } } : {}),
  },
});
