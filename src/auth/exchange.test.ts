import { describe, expect, it } from "vitest";
import { ProxyError } from "../util/errors.js";
import { createExchange, exchangeForTokens, refreshOAuthLogin } from "./exchange.js";
import type { FetchLike } from "./http.js";

interface Call {
  url: string;
  init: RequestInit;
}

function fakeFetch(respond: () => Response | Promise<Response>) {
  const calls: Call[] = [];
  const fetch: FetchLike = async (url, init) => {
    calls.push({ url, init });
    return respond();
  };
  return { fetch, calls };
}

const CREDENTIAL = "refresh-secret-xyz";

async function failure(promise: Promise<unknown>): Promise<ProxyError> {
  const error = await promise.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ProxyError);
  expect((error as ProxyError).message).not.toContain(CREDENTIAL);
  return error as ProxyError;
}

describe("exchangeForTokens", () => {
  it("POSTs {} with the bearer credential and returns the pair", async () => {
    const { fetch, calls } = fakeFetch(() => Response.json({ accessToken: "a1", refreshToken: "r1", extra: true }));
    const pair = await exchangeForTokens(CREDENTIAL, { apiUrl: "https://api.test", fetch });
    expect(pair).toEqual({ accessToken: "a1", refreshToken: "r1" });
    expect(calls).toHaveLength(1);
    expect(calls[0]?.url).toBe("https://api.test/auth/exchange_user_api_key");
    expect(calls[0]?.init.method).toBe("POST");
    expect(calls[0]?.init.body).toBe("{}");
    const headers = new Headers(calls[0]?.init.headers);
    expect(headers.get("authorization")).toBe(`Bearer ${CREDENTIAL}`);
    expect(headers.get("content-type")).toBe("application/json");
  });

  it.each([401, 403])("maps %i to unauthenticated with a login hint", async (status) => {
    const { fetch } = fakeFetch(() => new Response("denied", { status }));
    const error = await failure(exchangeForTokens(CREDENTIAL, { apiUrl: "https://api.test", fetch }));
    expect(error.code).toBe("unauthenticated");
    expect(error.status).toBe(401);
    expect(error.message).toContain("run `cursor-bridge login`");
  });

  it.each([
    [429, "rate_limited"],
    [503, "backend_unavailable"],
    [400, "backend_protocol"],
  ])("maps HTTP %i to %s", async (status, code) => {
    const { fetch } = fakeFetch(() => new Response(null, { status }));
    expect((await failure(exchangeForTokens(CREDENTIAL, { apiUrl: "https://api.test", fetch }))).code).toBe(code);
  });

  it("rejects a 200 without tokens as a protocol error", async () => {
    const { fetch } = fakeFetch(() => Response.json({ accessToken: "only-access" }));
    const error = await failure(exchangeForTokens(CREDENTIAL, { apiUrl: "https://api.test", fetch }));
    expect(error.code).toBe("backend_protocol");
    expect(error.message).not.toContain("only-access");
  });

  it("maps network failures and caller aborts", async () => {
    const { fetch } = fakeFetch(() => Promise.reject(new TypeError("fetch failed")));
    expect((await failure(exchangeForTokens(CREDENTIAL, { apiUrl: "https://api.test", fetch }))).code).toBe(
      "backend_unavailable",
    );
    const controller = new AbortController();
    controller.abort();
    const aborted = exchangeForTokens(CREDENTIAL, { apiUrl: "https://api.test", fetch, signal: controller.signal });
    expect((await failure(aborted)).code).toBe("canceled");
  });

  it("binds options with createExchange", async () => {
    const { fetch, calls } = fakeFetch(() => Response.json({ accessToken: "a", refreshToken: "r" }));
    await createExchange({ apiUrl: "http://127.0.0.1:1/base/", fetch })(CREDENTIAL);
    expect(calls[0]?.url).toBe("http://127.0.0.1:1/base/auth/exchange_user_api_key");
  });
});

describe("refreshOAuthLogin", () => {
  it.each([
    [400, "backend_protocol"],
    [401, "unauthenticated"],
    [503, "backend_unavailable"],
  ])("maps HTTP %i to %s", async (status, code) => {
    const { fetch } = fakeFetch(() => new Response(null, { status }));
    expect((await failure(refreshOAuthLogin(CREDENTIAL, { apiUrl: "https://api.test", fetch }))).code).toBe(code);
  });

  it.each([400, 200, 503])("takes a body with error invalid_grant (HTTP %i) as a rejected login", async (status) => {
    const { fetch } = fakeFetch(() => Response.json({ error: "invalid_grant" }, { status }));
    const error = await failure(refreshOAuthLogin(CREDENTIAL, { apiUrl: "https://api.test", fetch }));
    expect(error).toMatchObject({ code: "unauthenticated", detail: "credentials_rejected" });
    expect(error.message).toBe(
      `Cursor rejected the stored login (HTTP ${status}, invalid_grant); run \`cursor-bridge login\`.`,
    );
  });
});
