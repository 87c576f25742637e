import { afterEach, describe, expect, it } from "vitest";
import { launcherFromEnv, setLauncher, withLauncher } from "./command-hint.js";

afterEach(() => {
  setLauncher("cursor-bridge");
});

describe("command hints", () => {
  it("recognise npm scripts of this package as a clone, anything else as installed", () => {
    const start = { npm_package_name: "cursor-bridge", npm_lifecycle_script: "node bin/cursor-bridge.js serve" };
    expect(launcherFromEnv(start)).toBe("npm run --silent cli --");
    expect(launcherFromEnv({ ...start, npm_lifecycle_script: "node bin/cursor-bridge.js" })).toBe(
      "npm run --silent cli --",
    );
    expect(launcherFromEnv({ ...start, npm_package_name: "my-app" })).toBe("cursor-bridge");
    // `npm test` runs vitest, whose child processes inherit npm's variables: not a user's launch.
    expect(launcherFromEnv({ ...start, npm_lifecycle_script: "node tools/sub-packages.mjs && vitest run" })).toBe(
      "cursor-bridge",
    );
    expect(launcherFromEnv({})).toBe("cursor-bridge");
  });

  it("rewrite only backquoted commands, and only for a clone", () => {
    const text =
      "Run `cursor-bridge login` (or `cursor-bridge import`); cursor-bridge serve is fine; `cursor-bridge x`";
    expect(withLauncher(text)).toBe(text);
    setLauncher("npm run --silent cli --");
    expect(withLauncher(text)).toBe(
      "Run `npm run --silent cli -- login` (or `npm run --silent cli -- import`); cursor-bridge serve is fine; `cursor-bridge x`",
    );
  });
});
