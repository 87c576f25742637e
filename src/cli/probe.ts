/**
 * Reachability probes for `status` and `doctor`: one unauthenticated Connect request to
 * `agent.v1.AgentService/GetUsableModels` (docs/protocol.md §1.2, §6) over HTTP/2 or HTTP/1.1. Any HTTP answer,
 * including 401, proves the upstream is reachable over that protocol; only a failure to get a response does not.
 * No token is sent, so the probe cannot leak or spend one.
 */
import { connect } from "node:http2";

/** Which HTTP version a probe used. */
export type ProbeProtocol = "http2" | "http1";

/** Outcome of one probe. Printable. */
export interface ProbeResult {
  protocol: ProbeProtocol;
  reachable: boolean;
  /** HTTP status of the answer, when there was one. */
  status?: number;
  /** Node error code or a short reason, when there was no answer. */
  error?: string;
}

/** The path probed: a cheap unary RPC every Cursor backend (and the emulator) serves. */
export const PROBE_PATH = "/agent.v1.AgentService/GetUsableModels";

function errorCode(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") return code;
    current = (current as { cause?: unknown }).cause;
  }
  return error instanceof Error && error.name === "TimeoutError" ? "timeout" : "no response";
}

/** Probes over HTTP/2 (TLS with ALPN for https, prior knowledge for http). */
export function probeHttp2(baseUrl: string, timeoutMs: number): Promise<ProbeResult> {
  return new Promise((resolve) => {
    let settled = false;
    const session = connect(new URL(baseUrl).origin);
    const finish = (result: Omit<ProbeResult, "protocol">): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      session.destroy();
      resolve({ protocol: "http2", ...result });
    };
    const timer = setTimeout(() => finish({ reachable: false, error: "timeout" }), timeoutMs);
    session.on("error", (error) => finish({ reachable: false, error: errorCode(error) }));
    session.on("connect", () => {
      const request = session.request({
        ":method": "POST",
        ":path": `${new URL(baseUrl).pathname.replace(/\/$/, "")}${PROBE_PATH}`,
        "content-type": "application/json",
        "connect-protocol-version": "1",
      });
      request.on("response", (headers) => finish({ reachable: true, status: Number(headers[":status"]) }));
      request.on("error", (error) => finish({ reachable: false, error: errorCode(error) }));
      request.end("{}");
    });
  });
}

/** Probes over HTTP/1.1 with fetch (undici speaks HTTP/1.1 only). */
export async function probeHttp1(
  baseUrl: string,
  timeoutMs: number,
  fetchImpl: typeof fetch = fetch,
): Promise<ProbeResult> {
  try {
    const response = await fetchImpl(`${baseUrl.replace(/\/+$/, "")}${PROBE_PATH}`, {
      method: "POST",
      headers: { "content-type": "application/json", "connect-protocol-version": "1" },
      body: "{}",
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.body?.cancel();
    return { protocol: "http1", reachable: true, status: response.status };
  } catch (error) {
    return { protocol: "http1", reachable: false, error: errorCode(error) };
  }
}

/**
 * Human text for a probe result, e.g. "reachable over HTTP/2". The probe carries no credentials, so Cursor's 401 is
 * the expected answer and not worth showing; a server error (5xx) is shown.
 */
export function describeProbe(result: ProbeResult): string {
  const protocol = result.protocol === "http2" ? "HTTP/2" : "HTTP/1.1";
  if (!result.reachable) return `not reachable over ${protocol} (${result.error ?? "no response"})`;
  const serverError = result.status === undefined || result.status >= 500;
  return serverError
    ? `reachable over ${protocol}, but it answered HTTP ${result.status ?? "?"}`
    : `reachable over ${protocol}`;
}
