import { describe, expect, it } from "vitest";
import { unifiedDiff } from "./text-diff.js";

describe("unifiedDiff", () => {
  it("is empty for equal texts", () => {
    expect(unifiedDiff("a\nb\n", "a\nb\n", "f")).toBe("");
  });

  it("shows a new file as one hunk of additions", () => {
    expect(unifiedDiff("", "a\nb\n", "f")).toBe("--- f\n+++ f\n@@ -0,0 +1,2 @@\n+a\n+b\n");
  });

  it("keeps three lines of context and splits distant changes into hunks", () => {
    const before = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`);
    const after = [...before];
    after[1] = "changed 2";
    after.splice(15, 0, "inserted");
    const diff = unifiedDiff(`${before.join("\n")}\n`, `${after.join("\n")}\n`, "f");
    expect(diff).toBe(
      [
        "--- f",
        "+++ f",
        "@@ -1,5 +1,5 @@",
        " line 1",
        "-line 2",
        "+changed 2",
        " line 3",
        " line 4",
        " line 5",
        "@@ -13,6 +13,7 @@",
        " line 13",
        " line 14",
        " line 15",
        "+inserted",
        " line 16",
        " line 17",
        " line 18",
        "",
      ].join("\n"),
    );
  });
});
