/**
 * The rate-limit headers of a key's window, as OpenAI and Anthropic send them on every answer, refusals included:
 * OpenAI's `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` (reset as a duration: `1s`, `6m0s`, `250ms`) and,
 * on /v1/messages, Anthropic's `anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset}` (reset as an RFC 3339
 * time). Only the limits the key has are described (a key without a tpm gets no token headers).
 *
 * Windows slide over the last 60 s: a request counts for 60 s from its start, a finished request's tokens for 60 s
 * from its end. `reset` is when the window is empty again (the newest entry leaves it); `Retry-After` on a refusal
 * is when the next request would be admitted (the oldest entry leaves it, or enough tokens do).
 */
import type { WindowState } from "../../stores/types.js";
import type { KeyLimits } from "../../surfaces/kit/principal.js";

/** `1s`, `6m0s`, `1h2m3s`, `1.5s`, `250ms` (Go's duration format, which OpenAI's reset headers use). */
export function openAIDuration(ms: number): string {
  const total = Math.max(0, Math.ceil(ms));
  if (total < 1000) return `${total}ms`;
  const hours = Math.floor(total / 3_600_000);
  const minutes = Math.floor((total % 3_600_000) / 60_000);
  const seconds = (total % 60_000) / 1000;
  const secondsText = `${Number.isInteger(seconds) ? seconds : seconds.toFixed(3).replace(/0+$/, "")}s`;
  if (hours > 0) return `${hours}h${minutes}m${secondsText}`;
  if (minutes > 0) return `${minutes}m${secondsText}`;
  return secondsText;
}

/** What the headers and a refusal's Retry-After are made of. */
export interface RateSnapshot {
  requests?: { limit: number; remaining: number; resetMs: number };
  tokens?: { limit: number; remaining: number; resetMs: number };
  /** On a refusal: ms until the refused limit admits a request again. */
  retryAfterMs: number;
}

/** Reads the window: remaining counts, resets and, for a refusal, when to retry. */
export function rateSnapshot(limits: KeyLimits, state: WindowState, now: number, windowMs: number): RateSnapshot {
  const snapshot: RateSnapshot = { retryAfterMs: 0 };
  const leaves = (at: number) => Math.max(0, at + windowMs - now);
  if (limits.rpm !== undefined) {
    snapshot.requests = {
      limit: limits.rpm,
      remaining: Math.max(0, limits.rpm - state.requestCount),
      resetMs: state.newestRequestAt === undefined ? 0 : leaves(state.newestRequestAt),
    };
    // The request that frees a place is the one rpm places before the end of the window.
    if (state.refused === "rpm" && state.freeingRequestAt !== undefined) {
      snapshot.retryAfterMs = leaves(state.freeingRequestAt);
    }
  }
  if (limits.tpm !== undefined) {
    snapshot.tokens = {
      limit: limits.tpm,
      remaining: Math.max(0, limits.tpm - state.tokensUsed),
      resetMs: state.newestTokensAt === undefined ? 0 : leaves(state.newestTokensAt),
    };
    if (state.refused === "tpm" && state.freeingTokensAt !== undefined) {
      snapshot.retryAfterMs = leaves(state.freeingTokensAt);
    }
  }
  if (state.refused === "parallel") snapshot.retryAfterMs = 1000;
  return snapshot;
}

/** The header names of each unit, spelled out once (built per answer, each name was a new string to look up). */
const NAMES = {
  requests: {
    limit: "x-ratelimit-limit-requests",
    remaining: "x-ratelimit-remaining-requests",
    reset: "x-ratelimit-reset-requests",
    anthropicLimit: "anthropic-ratelimit-requests-limit",
    anthropicRemaining: "anthropic-ratelimit-requests-remaining",
    anthropicReset: "anthropic-ratelimit-requests-reset",
  },
  tokens: {
    limit: "x-ratelimit-limit-tokens",
    remaining: "x-ratelimit-remaining-tokens",
    reset: "x-ratelimit-reset-tokens",
    anthropicLimit: "anthropic-ratelimit-tokens-limit",
    anthropicRemaining: "anthropic-ratelimit-tokens-remaining",
    anthropicReset: "anthropic-ratelimit-tokens-reset",
  },
} as const;

/** The headers of a snapshot; `anthropic` adds Anthropic's (on /v1/messages). */
export function rateHeaders(snapshot: RateSnapshot, now: number, anthropic: boolean): Record<string, string> {
  const headers: Record<string, string> = {};
  const add = (names: (typeof NAMES)[keyof typeof NAMES], state: RateSnapshot["requests"]) => {
    if (state === undefined) return;
    headers[names.limit] = String(state.limit);
    headers[names.remaining] = String(state.remaining);
    headers[names.reset] = openAIDuration(state.resetMs);
    if (anthropic) {
      headers[names.anthropicLimit] = String(state.limit);
      headers[names.anthropicRemaining] = String(state.remaining);
      const resetAt = now + Math.ceil(state.resetMs / 1000) * 1000;
      headers[names.anthropicReset] = new Date(resetAt).toISOString().replace(/\.\d{3}Z$/, "Z");
    }
  };
  add(NAMES.requests, snapshot.requests);
  add(NAMES.tokens, snapshot.tokens);
  return headers;
}
