/**
 * docs/api.md's table of error `code`s is the closed set the OpenAI doors send: every code that any ProxyError code
 * and reason turns into has a row, and every code in the table is one the doors can send. The reasons are listed
 * here as a record the compiler holds to `ProxyErrorDetails`, so a new reason cannot be left out.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { toOpenAIError } from "../../src/surfaces/kit/openai-error.js";
import { ProxyError, type ProxyErrorCode, type ProxyErrorDetails } from "../../src/util/errors.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Every reason of every code (the network codes' open-ended `ERR_HTTP2_…` forms aside). */
const REASONS: { [C in ProxyErrorCode]: Record<ProxyErrorDetails[C], true> } = {
  invalid_request: {
    invalid_config: true,
    unsafe_binding: true,
    invalid_field: true,
    nesting_too_deep: true,
    bad_request: true,
    file_unsupported: true,
    image_too_large: true,
    file_too_long: true,
    invalid_argument: true,
    already_exists: true,
    failed_precondition: true,
    out_of_range: true,
    turn_in_progress: true,
    previous_response_not_found: true,
    unsupported_model_parameter: true,
  },
  request_too_large: { body_too_large: true, message_too_large: true },
  unsupported_media_type: { not_json: true, encoded_body: true },
  unauthenticated: {
    local_api_key: true,
    unauthenticated: true,
    token_expired: true,
    not_logged_in: true,
    refresh_failed: true,
    refresh_unavailable: true,
    credentials_rejected: true,
    invalid_credentials_file: true,
  },
  permission_denied: {
    permission_denied: true,
    host_not_allowed: true,
    origin_not_allowed: true,
    model_blocked: true,
    account_blocked: true,
    account_unknown: true,
    model_not_available: true,
  },
  not_found: { model_not_found: true, not_found: true, route_not_found: true, turn_expired: true },
  rate_limited: { rate_limit: true, key_rpm: true, key_tpm: true, key_parallel: true },
  quota_exceeded: { usage_limit: true, resource_exhausted: true },
  key_budget_exceeded: { spent: true, held: true },
  context_length_exceeded: { max_tokens: true, conversation_too_long: true, context_overflow: true },
  backend_unavailable: {
    unknown: true,
    aborted: true,
    internal: true,
    unavailable: true,
    agent_engine_not_found: true,
    provider_error: true,
    stream_reset: true,
    missing_end_stream: true,
    store_unavailable: true,
    instance_unreachable: true,
    server_shutting_down: true,
    server_updated: true,
    ECONNREFUSED: true,
    ECONNRESET: true,
    ECONNABORTED: true,
    EPIPE: true,
    ETIMEDOUT: true,
    ENOTFOUND: true,
    EAI_AGAIN: true,
    EHOSTUNREACH: true,
    ENETUNREACH: true,
    ENETDOWN: true,
    ERR_STREAM_PREMATURE_CLOSE: true,
    ERR_STREAM_WRITE_AFTER_END: true,
    ERR_STREAM_DESTROYED: true,
    UND_ERR_SOCKET: true,
    UND_ERR_CONNECT_TIMEOUT: true,
    UND_ERR_HEADERS_TIMEOUT: true,
    UND_ERR_BODY_TIMEOUT: true,
    UND_ERR_CLOSED: true,
  },
  backend_protocol: {
    outdated_client: true,
    blob_not_found: true,
    unimplemented: true,
    data_loss: true,
    stream_closed: true,
    upstream_truncated: true,
    unknown_code: true,
  },
  timeout: { upstream_timeout: true, deadline_exceeded: true, timeout: true, stalled: true },
  canceled: { canceled: true, user_aborted: true },
  internal: { unexpected: true },
};

/** The `code` cells of the table under "The `code` values form a closed set". */
function documentedCodes(): Set<string> {
  const page = readFileSync(join(ROOT, "docs", "api.md"), "utf8");
  const table = page.slice(page.indexOf("The `code` values form a closed set"));
  const codes = new Set<string>();
  for (const line of table.split("\n").slice(1)) {
    const row = line.trim();
    if (row === "" && codes.size > 0) break;
    if (!/^\| \d{3} \|/.test(row)) continue;
    // The code cell, without its parenthesized remarks ("`null` (with `param`)").
    const cell = (row.split(" | ")[1] ?? "").replace(/\([^)]*\)/g, "");
    for (const match of cell.matchAll(/`([a-z_]+)`/g)) codes.add(match[1] ?? "");
  }
  return codes;
}

describe("docs/api.md's error codes", () => {
  it("are exactly the codes the OpenAI doors send", () => {
    const sent = new Set<string>();
    for (const [code, reasons] of Object.entries(REASONS) as Array<[ProxyErrorCode, Record<string, true>]>) {
      for (const detail of [undefined, ...Object.keys(reasons)]) {
        const error = new ProxyError(code, "m", detail === undefined ? {} : { detail: detail as never });
        sent.add(toOpenAIError(error).body.error.code ?? "null");
      }
    }
    const documented = documentedCodes();
    expect(documented.size).toBeGreaterThan(20);
    expect([...sent].filter((code) => !documented.has(code)).sort(), "sent but not in the table").toEqual([]);
    expect([...documented].filter((code) => !sent.has(code)).sort(), "in the table but never sent").toEqual([]);
  });
});
