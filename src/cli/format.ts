/**
 * Small formatters for human output: relative times, token counts, progress bars and who is logged in.
 */
import type { CredentialStatus } from "../auth/index.js";

/** "in 59 min", "3 h ago", "in 2 days". */
export function relativeTime(targetMs: number, nowMs: number): string {
  const delta = targetMs - nowMs;
  const minutes = Math.round(Math.abs(delta) / 60_000);
  let amount: string;
  if (minutes < 1) amount = "less than a minute";
  else if (minutes < 120) amount = `${minutes} min`;
  else if (minutes < 48 * 60) amount = `${Math.round(minutes / 60)} h`;
  else amount = `${Math.round(minutes / (24 * 60))} days`;
  return delta >= 0 ? `in ${amount}` : `${amount} ago`;
}

/** An ISO timestamp as "2026-01-17 14:03 UTC". */
export function shortDate(iso: string): string {
  return `${iso.slice(0, 16).replace("T", " ")} UTC`;
}

/** 200000 → "200k", 1000000 → "1M". */
export function tokenCount(tokens: number): string {
  if (tokens >= 1_000_000 && tokens % 1_000_000 === 0) return `${tokens / 1_000_000}M`;
  if (tokens >= 1_000) return `${Math.round(tokens / 1_000)}k`;
  return String(tokens);
}

/** A text bar: `[#######-------------]` for a fraction in 0..1 (clamped). */
export function progressBar(fraction: number, width = 30): string {
  const clamped = Number.isFinite(fraction) ? Math.min(1, Math.max(0, fraction)) : 0;
  const filled = Math.round(clamped * width);
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}]`;
}

/** Who a login is: its email, else its user id; undefined when neither is known (or there is no status). */
export function loginOf(status: Pick<CredentialStatus, "email" | "userId"> | undefined): string | undefined {
  return status?.email ?? status?.userId;
}

/** The name to show for a login: email, else user id, else "an unknown user". */
export function identityOf(status: Pick<CredentialStatus, "email" | "userId">): string {
  return loginOf(status) ?? "an unknown user";
}

/** Where credentials came from, in words. */
export function sourceLabel(source: CredentialStatus["source"]): string {
  switch (source) {
    case "login":
      return "browser login";
    case "api-key":
      return "API key";
    case "import:cli":
      return "imported from the Cursor CLI";
    case "import:ide":
      return "imported from the Cursor IDE";
    case "env":
      return "environment";
  }
}

/** "valid until 2026-01-17 14:03 UTC (in 59 min)" / "expired 2026-… (3 h ago)" / "expiry unknown". */
export function expiryText(status: Pick<CredentialStatus, "expiresAt" | "expired">, nowMs: number): string {
  if (status.expiresAt === undefined) return "expiry unknown (not a JWT with exp)";
  const when = `${shortDate(status.expiresAt)} (${relativeTime(Date.parse(status.expiresAt), nowMs)})`;
  return status.expired === true ? `expired ${when}` : `valid until ${when}`;
}
