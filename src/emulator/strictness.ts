/**
 * Header rules every RPC must pass (docs/protocol.md §2.2, cursor-protocol-addendum-2.md §1): a `Bearer` access token
 * that is ours and unexpired, `x-cursor-client-type` `cli`, `sdk` (Cursor's own TypeScript SDK) or `ide`, and an
 * `x-cursor-client-version` of the form `cli-YYYY.MM.DD-<7 hex>[-lab]` (not older than the configured minimum) or
 * one of the SDK's forms, with any of those client types, or the IDE's `X.Y.Z` with type `ide`. A unary call outside
 * a turn sent without a client type needs only the token (the real service answers such calls); a turn (`Run`,
 * `RunSSE`, `BidiAppend`) always needs both headers.
 * `connect-protocol-version` may be absent (index.ts).
 */
import { createContextKey, type Interceptor } from "@connectrpc/connect";
import type { Authority } from "./auth.js";
import { badRequest, outdatedClient, unauthenticated, updateRequired, usageLimit } from "./errors.js";
import type { TokenIdentity } from "./jwt.js";

/** Who the call's access token belongs to (set by the interceptor for the handlers, e.g. the plan usage). */
export const identityKey = createContextKey<TokenIdentity | undefined>(undefined, { description: "token identity" });

/** The agent RPCs a usage limit refuses (a turn); unary calls such as the model list still answer. */
const TURN_METHODS = new Set(["Run", "RunSSE"]);

/** The CLI's build id; a build of a non-production channel ends in `-lab` (cursor-protocol-addendum-3.md E8). */
const VERSION = /^cli-(\d{4})\.(\d{2})\.(\d{2})-[0-9a-f]{7}(?:-lab)?$/;
/**
 * The SDK's forms (E12): `sdk-1.0.32` (a semver, pre-release and build parts allowed), `sdk-python-<semver>` from the
 * Python SDK, `agentkit-<version>`, and `sdk-unknown` when it knows none.
 */
const SDK_VERSION =
  /^(?:sdk-(?:python-)?\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]+)?|agentkit-[0-9A-Za-z][0-9A-Za-z.+-]*|sdk-unknown)$/;
/** The IDE's version (`3.18.9`, E11), sent with client type `ide`. */
const IDE_VERSION = /^\d+\.\d+\.\d+$/;
/** Client types Cursor's own clients send: the CLI, the SDK and the IDE (E11). */
const CLIENT_TYPES = new Set(["cli", "sdk", "ide"]);

/** The default minimum: the official CLI build the reference was read from (§0, RAPH@restored). */
export const DEFAULT_MIN_CLIENT_VERSION = "cli-2025.11.25-d5b3271";

/** `cli-YYYY.MM.DD-sha` → YYYYMMDD as a number; undefined when malformed. */
export function clientVersionDate(version: string): number | undefined {
  const match = VERSION.exec(version);
  if (match === null) return undefined;
  return Number(`${match[1]}${match[2]}${match[3]}`);
}

/** Options of {@link checkHeaders}. */
export interface StrictnessOptions {
  authority: Authority;
  minClientVersion: string;
  /** Users at their usage limit (Emulator.limitUsage): their turns get the usage-limit error. @default none */
  usageLimited?: (userId: string) => boolean;
}

/** The methods of a turn: they need the client headers even when other unary calls do not. */
const TURN_PARTS = new Set(["Run", "RunSSE", "BidiAppend"]);

/**
 * Throws the Connect error the real service would answer for bad headers; returns the client version otherwise
 * ("" for a call outside a turn that sent no client type, which needs only the token). A version below the minimum
 * fails a Run with the real "Update Required" refusal (cursor-protocol-addendum-3.md E1), other calls with
 * OUTDATED_CLIENT; `GetServerConfig` still answers it (it is how a client learns the minimum).
 */
export function checkHeaders(header: Headers, options: StrictnessOptions, turn = true, method = ""): string {
  const auth = options.authority.authenticate(header.get("authorization"));
  if (!auth.ok) throw unauthenticated(auth.failure);
  const clientType = header.get("x-cursor-client-type");
  if (!turn && (clientType === null || clientType === "")) return "";
  if (clientType === null || clientType === "") throw badRequest("Missing x-cursor-client-type header.");
  if (!CLIENT_TYPES.has(clientType)) throw badRequest(`Unsupported x-cursor-client-type "${clientType}".`);
  const version = header.get("x-cursor-client-version");
  if (version === null || version === "") throw badRequest("Missing x-cursor-client-version header.");
  // No minimum SDK or IDE version is known: any well-formed one passes.
  if (SDK_VERSION.test(version)) return version;
  if (clientType === "ide" && IDE_VERSION.test(version)) return version;
  const date = clientVersionDate(version);
  if (date === undefined) throw badRequest(`Malformed x-cursor-client-version "${version}".`);
  const minimum = clientVersionDate(options.minClientVersion);
  if (minimum !== undefined && date < minimum && method !== "GetServerConfig") {
    throw TURN_METHODS.has(method) ? updateRequired() : outdatedClient(version);
  }
  return version;
}

/** A router interceptor applying {@link checkHeaders} to every RPC before its handler runs. */
export function createStrictnessInterceptor(options: StrictnessOptions): Interceptor {
  return (next) => async (request) => {
    checkHeaders(request.header, options, TURN_PARTS.has(request.method.name) || request.stream, request.method.name);
    const auth = options.authority.authenticate(request.header.get("authorization"));
    if (auth.ok) {
      request.contextValues.set(identityKey, auth.identity);
      if (TURN_METHODS.has(request.method.name) && options.usageLimited?.(auth.identity.userId) === true) {
        throw usageLimit();
      }
    }
    return next(request);
  };
}
