import { describe, expect, it } from "vitest";
import { hiddenClassCheck } from "../../test/support/hidden-class.js";
import { clampForMessage, createLogger, MAX_LOG_FIELD_CHARS, redact, redactText, TOO_DEEP } from "./logger.js";

const JWT =
  "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhdXRoMHx1c2VyXzEyMyIsImV4cCI6MTc2NzIyNTYwMH0.c2lnbmF0dXJlLWJ5dGVzLWhlcmU";

describe("logger redaction", () => {
  it("removes bearer tokens, JWTs and API keys from text", () => {
    const text = redactText(
      `authorization: Bearer abc.def-123 then ${JWT} and key_abcdefghij1234 and cur_0123456789abcdef`,
    );
    expect(text).not.toContain("abc.def-123");
    expect(text).not.toContain(JWT);
    expect(text).not.toContain("key_abcdefghij1234");
    expect(text).not.toContain("cur_0123456789abcdef");
  });

  it("redacts each kind of secret when it is the only one in the text, in any case the pattern allows", () => {
    // redactText skips its replaces when no pattern can match: each pattern alone must still be caught.
    for (const [text, secret] of [
      ["BEARER abc123def456", "abc123def456"],
      ["x bearer\tzz-top-secret y", "zz-top-secret"],
      [`token=${JWT}`, JWT],
      ["sk_live1234567890", "sk_live1234567890"],
      ["(key_abcdefghij01)", "key_abcdefghij01"],
      ["crsr_0123456789abcdef0123", "crsr_0123456789abcdef0123"],
      ["cbk-abcdefghijklmnopqrstu", "abcdefghijklmnopqrstu"],
    ] as const) {
      expect(redactText(text)).not.toContain(secret);
    }
    for (const plain of [
      "0107ecd53465463188c8b0050d966c02",
      "composer-1.5",
      "POST /v1/chat/completions 200",
      "",
      "code=key_budget_exceeded detail=key_parallel",
      "sk_abcdefghijklmnop",
    ]) {
      expect(redactText(plain)).toBe(plain);
    }
  });

  it("reads a getter field only when the line is written, and redacts what it returns", () => {
    // cursor-api.ts logs each Run's headers through a getter so that turns pay for the copy only at debug level.
    let reads = 0;
    const fields = {
      get headers() {
        reads += 1;
        return { authorization: "Bearer abcdef123456", "x-request-id": "r1" };
      },
    };
    const lines: string[] = [];
    createLogger({ level: "info", sink: (line) => lines.push(line) }).debug("Opening Run", fields);
    expect(reads).toBe(0);
    expect(lines).toEqual([]);
    createLogger({ level: "debug", sink: (line) => lines.push(line) }).debug("Opening Run", fields);
    expect(reads).toBe(1);
    expect(lines[0]).toContain("[redacted]");
    expect(lines[0]).not.toContain("abcdef123456");
  });

  it("redacts secret-looking keys at any depth but keeps token counts", () => {
    const out = redact({
      accessToken: "a",
      nested: { refresh_token: "b", "x-api-key": "c", headers: { authorization: "d" } },
      tokens: 42,
      max_tokens: 10,
    }) as Record<string, unknown>;
    expect(out).toEqual({
      accessToken: "[redacted]",
      nested: { refresh_token: "[redacted]", "x-api-key": "[redacted]", headers: { authorization: "[redacted]" } },
      tokens: 42,
      max_tokens: 10,
    });
  });

  it("never writes the server's own keys, which no pattern recognises, in text or JSON lines", () => {
    const lines: string[] = [];
    const secrets = ["operator-key-0123456789", 'admin"key\\0123456789'];
    for (const format of ["text", "json"] as const) {
      const root = createLogger({ format, secrets, sink: (line) => lines.push(line) });
      const logger = root.child({ component: "http" });
      logger.info("GET /v1/models/operator-key-0123456789 404", { asked: "operator-key-0123456789", n: 1 });
      logger.info("x", { model: secrets[1], nested: { path: `/${secrets[1]}` } });
      logger.info("short values stay", { model: "gpt-5" });
    }
    expect(lines).toHaveLength(6);
    for (const line of lines) {
      expect(line).not.toContain("operator-key");
      expect(line).not.toContain("0123456789");
    }
    expect(lines[0]).toContain("GET /v1/models/[redacted] 404");
    expect(lines.filter((line) => line.includes("gpt-5"))).toHaveLength(2);
    // Too short to tell from ordinary words: not registered (it would blank every line that says it).
    const short: string[] = [];
    createLogger({ secrets: ["local"], sink: (line) => short.push(line) }).info("local key", { key: "local" });
    expect(short[0]).toContain("local key");
  });

  it("never writes a secret nested deeper than it copies, nor throws on a cycle there", () => {
    const lines: string[] = [];
    const deep = {
      a: { b: { c: { d: { e: { f: { g: { accessToken: "plain-secret-value", note: `Bearer ${JWT}` } } } } } } },
    };
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const format of ["text", "json"] as const) {
      const logger = createLogger({ format, sink: (line) => lines.push(line) });
      logger.info("deep", { deep });
      logger.info("cyclic", { cyclic });
    }
    expect(lines).toHaveLength(4);
    for (const line of lines) {
      expect(line).not.toContain("plain-secret-value");
      expect(line).not.toContain(JWT);
    }
    expect(lines[0]).toContain(TOO_DEEP);
    expect(lines[2]).toContain(TOO_DEEP);
  });

  it("never writes a token to a log line, whatever field or message carries it", () => {
    const lines: string[] = [];
    const logger = createLogger({ level: "debug", sink: (line) => lines.push(line), format: "json" });
    logger.info(`refreshing with ${JWT}`, { error: new Error(`rejected Bearer ${JWT}`), token: JWT, tokens: 5 });
    logger.child({ apiKey: "sk_live_1234567890" }).warn("child");
    expect(lines.join("\n")).not.toContain(JWT);
    expect(lines.join("\n")).not.toContain("sk_live_1234567890");
    expect(lines[0]).toContain('"tokens":5');
  });

  it("drops lines below the level", () => {
    const lines: string[] = [];
    const logger = createLogger({ level: "warn", sink: (line) => lines.push(line) });
    logger.info("no");
    logger.error("yes");
    expect(lines).toHaveLength(1);
  });
});

describe("log line safety", () => {
  it("keeps the placeholder of a hint readable while still redacting real bearer tokens", () => {
    expect(redactText("send `Authorization: Bearer <key>` with the key")).toBe(
      "send `Authorization: Bearer <key>` with the key",
    );
    expect(redactText("Authorization: Bearer abcdef123456")).toBe("Authorization: Bearer [redacted]");
  });

  it("quotes and escapes client values so a newline cannot forge a line, and cuts huge values", () => {
    const lines: string[] = [];
    const logger = createLogger({ sink: (line) => lines.push(line) });
    const forged = 'gpt\n2026-01-01T00:00:00.000Z INFO  POST /v1/admin 200 model="x"';
    logger.info("POST /v1/chat/completions\r\n200", { model: forged, path: "/v1/models", huge: "m".repeat(1_000_000) });
    expect(lines).toHaveLength(1);
    const line = lines[0] ?? "";
    expect(line).not.toMatch(/[\n\r]/);
    expect(line).toContain("POST /v1/chat/completions\\r\\n200");
    expect(line).toContain(`model=${JSON.stringify(forged)}`);
    expect(line).toContain("path=/v1/models");
    expect(line.length).toBeLessThan(2 * MAX_LOG_FIELD_CHARS);
    expect(line).toContain(`…(+${1_000_000 - MAX_LOG_FIELD_CHARS} chars)`);
  });

  it("cuts long fields in JSON lines too", () => {
    const lines: string[] = [];
    createLogger({ format: "json", sink: (line) => lines.push(line) }).info("x", { model: "m".repeat(5000) });
    const parsed = JSON.parse(lines[0] ?? "{}") as { model: string };
    expect(parsed.model.length).toBeLessThan(MAX_LOG_FIELD_CHARS + 30);
  });

  it("clampForMessage escapes control characters and Unicode line separators", () => {
    expect(clampForMessage("a\nb\u2028c\u001b[31m", 100)).toBe("a\\nb\\u2028c\\u001b[31m");
    expect(clampForMessage("abcdef", 3)).toBe("abc…(+3 chars)");
  });
});

describe("a child logger's text line", () => {
  const line = (bound: Record<string, unknown>, fields?: Record<string, unknown>) => {
    const lines: string[] = [];
    createLogger({ sink: (l) => lines.push(l), now: () => 0 }, bound).info("msg", fields);
    return lines[0];
  };
  const hidden = Object.defineProperty({ shown: 1 }, "conv", { value: "hidden", enumerable: false });
  const cases: Array<[string, Record<string, unknown>, Record<string, unknown> | undefined]> = [
    ["no fields", { component: "http" }, undefined],
    ["its own fields after the bound ones", { component: "http", run: "r1" }, { request_id: "a b", tokens: 3 }],
    [
      "a field replacing a bound one in its place",
      { component: "http", run: "r1", conv: "c" },
      { tokens: 3, run: "r2" },
    ],
    ["a field replacing a bound one with undefined", { component: "http", run: "r1" }, { run: undefined, ok: true }],
    ["secrets in either", { apiKey: "sk_live_1234567890", component: "x" }, { token: "t0k", note: `Bearer ${JWT}` }],
    ["array-index keys", { component: "http", 2: "two" }, { 10: "ten", a: 1, 1: "one" }],
    ["a field that is not enumerable", { component: "http", conv: "bound" }, hidden],
    ["objects and long values", { component: "http" }, { params: { a: [1, "x y"] }, model: "m".repeat(2000) }],
  ];

  it.each(cases)(
    "with %s is the line of `{ ...bound, ...fields }` logged by an unbound logger",
    (_name, bound, fields) => {
      expect(line(bound, fields)).toBe(line({}, fields === undefined ? bound : { ...bound, ...fields }));
    },
  );
});

describe("child loggers", () => {
  it("with the same keys share their bound fields' hidden class (no fresh map per turn's logger)", () => {
    const sameHiddenClass = hiddenClassCheck();
    const root = createLogger({ sink: () => undefined }, { component: "agent" });
    const boundOf = (logger: unknown) => (logger as { bound: object }).bound;
    // Many of them, as a server makes: V8 takes its fast path for a spread only once the site has run a few times.
    const children = Array.from({ length: 20 }, (_, i) => root.child({ conversationId: `c${i}`, requestId: `r${i}` }));
    expect(boundOf(children[19])).toEqual({ component: "agent", conversationId: "c19", requestId: "r19" });
    for (const child of children.slice(1)) expect(sameHiddenClass(boundOf(children[0]), boundOf(child))).toBe(true);
  });
});
