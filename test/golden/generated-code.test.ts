/**
 * src/gen must be exactly what `buf generate` makes from proto/ (house style: generated code is committed and never
 * hand-edited). Delegates to tools/check-gen.mjs, which regenerates into a temp dir and compares byte for byte.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));

describe("generated protobuf code", () => {
  it("is in sync with proto/ (otherwise run npm run generate)", () => {
    const result = spawnSync(process.execPath, ["tools/check-gen.mjs"], { cwd: root, encoding: "utf8" });
    expect(result.error).toBeUndefined();
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
  });
});
