/** `/v1/models` reports `vision` from Cursor's AvailableModels answer (here the emulator's), `auto` included. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../support/stack.js";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack.close();
});

describe("GET /v1/models vision", () => {
  it("marks image-capable models, and not the others", async () => {
    const body = (await (await fetch(`${stack.baseURL}/models`)).json()) as { data: { id: string; vision: boolean }[] };
    const vision = Object.fromEntries(body.data.map((m) => [m.id, m.vision]));
    expect(vision).toMatchObject({
      default: true,
      auto: true,
      "claude-4.6-opus-high": true,
      "grok-code-fast-1": false,
    });
  });
});
