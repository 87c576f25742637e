import { describe, expect, it } from "vitest";
import { buildCursorHeaders, connectStreamHeaders, headersForLog } from "./headers.js";

const base = {
  accessToken: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.c2lnbmF0dXJlLXNpZ25hdHVyZQ",
  clientVersion: "cli-2026.01.17-d239e66",
  ghostMode: true,
  requestId: "0b6d0f5e-3a61-4f55-a8a2-4a8f3f1d2c11",
};

describe("buildCursorHeaders (§2.1)", () => {
  it("builds the HTTP/2 header set", () => {
    expect(buildCursorHeaders(base)).toEqual({
      authorization: `Bearer ${base.accessToken}`,
      "x-cursor-client-type": "cli",
      "x-cursor-client-version": "cli-2026.01.17-d239e66",
      "x-ghost-mode": "true",
      "x-request-id": base.requestId,
    });
  });

  it("adds x-cursor-streaming on the HTTP/1.1 path and honours ghost mode off", () => {
    const headers = buildCursorHeaders({ ...base, ghostMode: false, streaming: true });
    expect(headers["x-cursor-streaming"]).toBe("true");
    expect(headers["x-ghost-mode"]).toBe("false");
  });

  it("gives hand-framed streams the Connect content type and protocol version", () => {
    expect(connectStreamHeaders()).toEqual({
      "content-type": "application/connect+proto",
      "connect-protocol-version": "1",
    });
  });

  it("never exposes the token in loggable headers", () => {
    const plain = JSON.stringify(headersForLog(buildCursorHeaders(base)));
    const viaHeaders = JSON.stringify(headersForLog(new Headers(buildCursorHeaders(base))));
    for (const text of [plain, viaHeaders]) {
      expect(text).not.toContain(base.accessToken);
      expect(text).toContain("[redacted]");
      expect(text).toContain(base.requestId);
    }
  });
});
