/**
 * Web pages cannot use the local server: Host, Origin and Content-Type guards, request ids and log lines that a
 * client cannot forge.
 */
import { describe, expect, it } from "vitest";
import { testAppOptions } from "../../test/support/app-options.js";
import type { AgentClient, AgentTurn, ModelInfo } from "../backend/types.js";
import { createEngine } from "../engine/index.js";
import type { AppOptions } from "../surfaces/kit/deps.js";
import { createLogger } from "../util/logger.js";
import { createApp } from "./app.js";
import { hostAllowed, hostnameOf, isJsonMediaType } from "./request-guard.js";

const MODELS: ModelInfo[] = [
  { id: "default", displayName: "Auto", aliases: [], reasoning: false, maxMode: false, vision: false },
];

function client(): AgentClient & { runs: number } {
  const state = { runs: 0 };
  return Object.assign(state, {
    listModels: async () => MODELS,
    startTurn(request: { conversationId: string }): AgentTurn {
      state.runs += 1;
      return {
        conversationId: request.conversationId,
        status: "streaming",
        pendingToolCallIds: [],
        stream: async function* () {
          yield { type: "text-delta", text: "hi" } as const;
          yield { type: "turn-end", reason: "stop" } as const;
        },
        resume: async function* () {},
        close: async () => {},
      };
    },
  }) as AgentClient & { runs: number };
}

function appWith(options: Partial<AppOptions> = {}) {
  const lines: string[] = [];
  const agentClient = client();
  const app = createApp({
    engine: createEngine({ agentClient }),
    logger: createLogger({ sink: (line) => lines.push(line) }),
    options: testAppOptions({ maxBodyBytes: 1 << 20, version: "0.0.0-test", ...options }),
    now: () => 1_700_000_000_000,
    newId: () => "fresh1",
  });
  return { app, lines, agentClient };
}

const chat = JSON.stringify({ model: "auto", messages: [{ role: "user", content: "x" }] });
const post = (headers: Record<string, string>, body = chat) => ({ method: "POST", headers, body });
const json = { "content-type": "application/json" };

async function errorOf(res: Response): Promise<{ code: string | null; message: string; type: string }> {
  expect(res.headers.get("content-type")).toMatch(/application\/json/);
  return ((await res.json()) as { error: { code: string | null; message: string; type: string } }).error;
}

describe("Host guard", () => {
  it("parses host names and accepts loopback and configured names only", () => {
    expect(hostnameOf("Example.COM:8765")).toBe("example.com");
    expect(hostnameOf("[::1]:8765")).toBe("::1");
    expect(hostnameOf("::1")).toBe("::1");
    for (const host of ["localhost:8765", "127.0.0.1", "127.0.0.1:1", "[::1]:8765", "api.localhost"]) {
      expect(hostAllowed(host, []), host).toBe(true);
    }
    for (const host of ["evil.example", "evil.example:8765", "0.0.0.0:8765", "127.0.0.1.evil.example", ""]) {
      expect(hostAllowed(host, []), host).toBe(false);
    }
    expect(hostAllowed("box.lan:8765", ["box.lan"])).toBe(true);
    expect(hostAllowed("anything:1", ["*"])).toBe(true);
    expect(hostAllowed("", ["*"])).toBe(false);
    expect(hostAllowed(":8765", ["*"])).toBe(false);
  });

  it("rejects a rebound host name with 403 before anything reaches Cursor, on every route", async () => {
    const { app, agentClient } = appWith();
    for (const [path, init] of [
      ["/v1/chat/completions", post({ ...json, host: "attacker.example:8765" })],
      ["/v1/models", { headers: { host: "attacker.example" } }],
      ["/health", { headers: { host: "attacker.example" } }],
    ] as const) {
      const res = await app.request(path, init);
      expect(res.status, path).toBe(403);
      const error = await errorOf(res);
      expect(error.code).toBe("host_not_allowed");
      expect(error.message).toContain("--allowed-hosts attacker.example");
    }
    expect(agentClient.runs).toBe(0);
    const allowed = appWith({ allowedHosts: ["attacker.example"] }).app;
    expect((await allowed.request("/v1/models", { headers: { host: "attacker.example" } })).status).toBe(200);
  });

  it("judges every request's Host, whatever the host of the request before was", async () => {
    const { app, agentClient } = appWith();
    const sequence: [host: string, status: number][] = [
      ["localhost:8765", 200],
      ["attacker.example:8765", 403],
      ["localhost:8765", 200],
      ["", 400],
      ["127.0.0.1:8765", 200],
      ["127.0.0.1.attacker.example", 403],
      ["127.0.0.1:8765", 200],
    ];
    for (const [host, status] of sequence) {
      const res = await app.request("/v1/chat/completions", post({ ...json, host }));
      expect(res.status, host).toBe(status);
      await res.arrayBuffer();
    }
    expect(agentClient.runs).toBe(4);
  });

  it("refuses an empty Host header with 400, even when every host is allowed", async () => {
    for (const allowedHosts of [[], ["*"]]) {
      const { app, agentClient } = appWith({ allowedHosts });
      for (const host of ["", " ", ":8765"]) {
        const res = await app.request("/v1/chat/completions", post({ ...json, host }));
        expect(res.status, `${JSON.stringify(host)} with ${allowedHosts}`).toBe(400);
        expect((await errorOf(res)).message).toContain("Host header is empty");
      }
      expect(agentClient.runs).toBe(0);
    }
  });
});

describe("Origin guard", () => {
  it("rejects browser requests from other origins, including no-cors GETs from another site", async () => {
    const { app, agentClient } = appWith();
    const res = await app.request("/v1/chat/completions", post({ ...json, origin: "https://evil.example" }));
    expect(res.status).toBe(403);
    const error = await errorOf(res);
    expect(error.code).toBe("origin_not_allowed");
    expect(error.message).toContain("--allowed-origins");
    const tag = await app.request("/v1/models", { headers: { "sec-fetch-site": "cross-site" } });
    expect(tag.status).toBe(403);
    expect((await app.request("/v1/models", { headers: { origin: "null" } })).status).toBe(403);
    expect(agentClient.runs).toBe(0);
  });

  it("always allows the server's own origin and requests without an Origin (SDKs, curl)", async () => {
    const { app } = appWith();
    const own = await app.request("http://127.0.0.1:8765/v1/chat/completions", {
      ...post({ ...json, host: "127.0.0.1:8765", origin: "http://127.0.0.1:8765", "sec-fetch-site": "same-origin" }),
    });
    expect(own.status).toBe(200);
    expect((await app.request("/v1/chat/completions", post(json))).status).toBe(200);
    expect((await app.request("/v1/models", { headers: { "sec-fetch-site": "none" } })).status).toBe(200);
  });

  it("allows a configured non-http origin (an editor webview) and still refuses 'null'", async () => {
    const { app } = appWith({ allowedOrigins: ["vscode-webview://abc123"] });
    const ok = await app.request("/v1/chat/completions", post({ ...json, origin: "vscode-webview://abc123" }));
    expect(ok.status).toBe(200);
    expect((await app.request("/v1/chat/completions", post({ ...json, origin: "null" }))).status).toBe(403);
  });

  it("allows configured origins with CORS headers, and answers their preflight", async () => {
    for (const options of [{ allowedOrigins: ["https://app.example"] }, { corsOrigins: ["https://app.example"] }]) {
      const { app } = appWith(options);
      const ok = await app.request("/v1/chat/completions", post({ ...json, origin: "https://app.example" }));
      expect(ok.status).toBe(200);
      expect(ok.headers.get("access-control-allow-origin")).toBe("https://app.example");
      expect(ok.headers.get("access-control-expose-headers")).toContain("x-request-id");
      const preflight = await app.request("/v1/chat/completions", {
        method: "OPTIONS",
        headers: {
          origin: "https://app.example",
          "access-control-request-method": "POST",
          "access-control-request-headers": "content-type,authorization",
        },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get("access-control-allow-headers")).toContain("content-type");
      const other = await app.request("/v1/chat/completions", post({ ...json, origin: "https://other.example" }));
      expect(other.status).toBe(403);
    }
  });
});

describe("Content-Type guard", () => {
  it("accepts JSON media types only", () => {
    expect(isJsonMediaType("application/json")).toBe(true);
    expect(isJsonMediaType("Application/JSON; charset=utf-8")).toBe(true);
    expect(isJsonMediaType("application/vnd.api+json")).toBe(true);
    for (const type of [undefined, "", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]) {
      expect(isJsonMediaType(type), String(type)).toBe(false);
    }
  });

  it("answers a text/plain simple request (no preflight needed by a page) with 415 and starts no Run", async () => {
    const { app, agentClient } = appWith();
    for (const headers of [{ "content-type": "text/plain" }, {}]) {
      const res = await app.request("/v1/chat/completions", post(headers));
      expect(res.status).toBe(415);
      const error = await errorOf(res);
      expect(error.code).toBe("unsupported_media_type");
      expect(error.message).toContain("application/json");
    }
    expect(agentClient.runs).toBe(0);
    expect(
      (await app.request("/v1/chat/completions", post({ "content-type": "application/json; charset=utf-8" }))).status,
    ).toBe(200);
  });
});

describe("request ids and the access log", () => {
  it("keeps valid client request ids and replaces invalid ones", async () => {
    const { app } = appWith();
    const cases: Array<[string, string]> = [
      ["client-7_ok=", "client-7_ok="],
      ["a".repeat(255), "a".repeat(255)],
      ["a".repeat(256), "fresh1"],
      ["has space", "fresh1"],
      ['quote"d', "fresh1"],
      ["semi;colon", "fresh1"],
      ["a.b", "fresh1"],
    ];
    for (const [sent, expected] of cases) {
      const res = await app.request("/v1/models", { headers: { "x-request-id": sent } });
      expect(res.headers.get("x-request-id"), sent).toBe(expected);
    }
  });

  it("escapes a newline in the model and cuts a huge model name, so no log line can be forged", async () => {
    const { app, lines } = appWith();
    const model = "auto\n2026-01-01T00:00:00.000Z INFO  POST /v1/admin 200 request_id=forged";
    const messages = [{ role: "user", content: "x" }];
    expect((await app.request("/v1/chat/completions", post(json, JSON.stringify({ model, messages })))).status).toBe(
      404,
    );
    await app.request(
      "/v1/chat/completions",
      post(json, JSON.stringify({ model: "m".repeat(200_000), messages: [{ role: "user", content: "x" }] })),
    );
    await app.request("/v1/models/evil%0Aline");
    for (const line of lines) {
      expect(line).not.toMatch(/[\n\r]/);
      expect(line.length).toBeLessThan(1500);
    }
    expect(lines.some((line) => line.includes("\\n2026-01-01"))).toBe(true);
  });

  it("keeps the local API key hint readable (the redactor removes tokens, not the placeholder)", async () => {
    const { app } = appWith({ apiKey: "s3cret-key-123" });
    const res = await app.request("/v1/chat/completions", post(json));
    expect(res.status).toBe(401);
    const error = await errorOf(res);
    expect(error.message).toContain("Authorization: Bearer <key>");
  });
});
