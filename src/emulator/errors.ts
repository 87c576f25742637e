/**
 * Connect errors the emulator sends, each with a machine-readable `aiserver.v1.ErrorDetails` detail
 * (docs/protocol.md §4.1: details of type "aiserver.v1.ErrorDetails", §4.12 for the enum).
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorDetails_Error, ErrorDetailsSchema } from "../gen/aiserver/v1/error_pb.js";
import type { ScriptedErrorCode } from "./directives.js";

function withDetails(
  message: string,
  code: Code,
  error: ErrorDetails_Error,
  title: string,
  isExpected = true,
): ConnectError {
  return new ConnectError(message, code, undefined, [
    { desc: ErrorDetailsSchema, value: { error, details: { title, detail: message }, isExpected } },
  ]);
}

/** The real service's answer to a missing or malformed blob (EPH commit 8b167a9: `internal: Blob not found`). */
export function blobNotFound(detail?: string): ConnectError {
  const message = detail === undefined ? "Blob not found" : `Blob not found: ${detail}`;
  return withDetails(message, Code.Internal, ErrorDetails_Error.NOT_FOUND, "Blob not found", false);
}

/** Usage limit: gRPC status 8 / Connect `resource_exhausted` on the agent stream (§1.3, RAPH 2026-02-04). */
export function usageLimit(): ConnectError {
  return withDetails(
    "You've hit your usage limit. Upgrade your plan or wait for your limit to reset.",
    Code.ResourceExhausted,
    ErrorDetails_Error.PRO_USER_USAGE_LIMIT,
    "Usage limit reached",
  );
}

/**
 * Outdated client. The reference documents only the legacy API's "please update" rejection (§1.2, §8, §9 item 1);
 * the agent API's code and wording here are a guess modelled on it.
 */
export function outdatedClient(version: string): ConnectError {
  return withDetails(
    `Your Cursor client (${version}) is outdated. Please update to the latest version of Cursor.`,
    Code.FailedPrecondition,
    ErrorDetails_Error.OUTDATED_CLIENT,
    "Update required",
  );
}

/** Why authentication failed. */
export type UnauthenticatedReason = "missing" | "malformed" | "invalid" | "expired" | "scripted";

/** Missing, malformed, unknown or expired credentials. */
export function unauthenticated(reason: UnauthenticatedReason): ConnectError {
  switch (reason) {
    case "missing":
      return withDetails(
        "Missing authorization header.",
        Code.Unauthenticated,
        ErrorDetails_Error.NOT_LOGGED_IN,
        "Not logged in",
      );
    case "malformed":
      return withDetails(
        "Malformed authorization header: expected `Bearer <token>`.",
        Code.Unauthenticated,
        ErrorDetails_Error.NOT_LOGGED_IN,
        "Not logged in",
      );
    case "expired":
      return withDetails(
        "Access token expired.",
        Code.Unauthenticated,
        ErrorDetails_Error.AUTH_TOKEN_EXPIRED,
        "Session expired",
      );
    default:
      return withDetails(
        "Invalid or unknown access token.",
        Code.Unauthenticated,
        ErrorDetails_Error.AUTH_TOKEN_NOT_FOUND,
        "Not logged in",
      );
  }
}

/** A request the server refuses as malformed (missing header, bad model, protocol violation). */
export function badRequest(message: string, error = ErrorDetails_Error.BAD_REQUEST): ConnectError {
  return withDetails(message, Code.InvalidArgument, error, "Bad request", false);
}

/** An internal server error. */
export function internalError(message = "Internal server error"): ConnectError {
  return withDetails(message, Code.Internal, ErrorDetails_Error.UNSPECIFIED, "Internal error", false);
}

/** The error a `[[emu:error CODE]]` directive asks for. */
export function scriptedError(code: ScriptedErrorCode, clientVersion: string): ConnectError {
  switch (code) {
    case "usage_limit":
      return usageLimit();
    case "unauthenticated":
      return unauthenticated("scripted");
    case "outdated_client":
      return outdatedClient(clientVersion);
    case "internal":
      return internalError("Scripted internal error");
    case "blob_not_found":
      return blobNotFound();
  }
}
