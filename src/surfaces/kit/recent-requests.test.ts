import { describe, expect, it } from "vitest";
import { clientOf, createRecentRequests, type RequestRecord, surfaceOf } from "./recent-requests.js";

const record = (at: number, extra: Partial<RequestRecord> = {}): RequestRecord => ({
  at,
  method: "POST",
  path: "/v1/chat/completions",
  surface: "chat",
  client: undefined,
  model: "auto",
  route: "new",
  parked: false,
  ttftMs: 5,
  totalMs: 10,
  tokens: 3,
  status: 200,
  streamError: undefined,
  ...extra,
});

describe("recent requests", () => {
  it("keeps the last `capacity` records, newest first", () => {
    const recent = createRecentRequests(3);
    expect(recent.list()).toEqual([]);
    recent.add(record(1));
    recent.add(record(2));
    expect(recent.list().map((r) => r.at)).toEqual([2, 1]);
    for (const at of [3, 4, 5, 6, 7]) recent.add(record(at));
    expect(recent.list().map((r) => r.at)).toEqual([7, 6, 5]);
  });

  it("cuts client-supplied text short", () => {
    const recent = createRecentRequests(2);
    recent.add(record(1, { model: "m".repeat(500), path: `/v1/${"p".repeat(500)}` }));
    const [kept] = recent.list();
    expect(kept?.model).toHaveLength(80);
    expect(kept?.model?.endsWith("…")).toBe(true);
    expect(kept?.path).toHaveLength(80);
  });

  it("names the surface and the client", () => {
    expect(surfaceOf("/v1/chat/completions")).toBe("chat");
    expect(surfaceOf("/v1/messages")).toBe("messages");
    expect(surfaceOf("/v1/messages/count_tokens")).toBe("count_tokens");
    expect(surfaceOf("/v1/responses/resp_1")).toBe("responses");
    expect(surfaceOf("/v1/models/auto")).toBe("models");
    expect(surfaceOf("/v1/nope")).toBe("other");
    expect(clientOf("claude-cli/2.1.330 (external, cli)")).toBe("claude-cli/2.1.330");
    expect(clientOf("  ")).toBeUndefined();
    expect(clientOf(undefined)).toBeUndefined();
  });
});
