/**
 * Each named Cursor account as `status` shows it (issue #29): who, where the login came from, the token's expiry and
 * this billing cycle's plan usage with its reset, asked of Cursor with that account's own tokens. An account whose
 * token has expired is not refreshed here (status never refreshes); its usage then waits for the next real use.
 */
import { describeCredentials } from "../auth/index.js";
import type { PlanUsage } from "../surfaces/kit/deps.js";
import { ProxyError } from "../util/errors.js";
import { clampForMessage } from "../util/logger.js";
import type { CliContext } from "./context.js";
import { shortDate } from "./format.js";
import { dollars, planUsageOf } from "./usage.js";

const USAGE_TIMEOUT_MS = 5_000;

/** One account in `status`. */
export interface AccountStatus {
  name: string;
  default: boolean;
  email?: string | undefined;
  userId?: string | undefined;
  source: string;
  expiresAt?: string | undefined;
  expired?: boolean | undefined;
  /** The plan usage (`cycleEnd` is when it resets), or null with `usageError` saying why. */
  usage: PlanUsage | null;
  usageError?: string | undefined;
}

async function usageOf(ctx: CliContext, name: string): Promise<PlanUsage | undefined> {
  const credentials = await ctx.forAccount(name).requireCredentials();
  const api = await ctx.createCursorApi(credentials.tokenSource);
  try {
    return planUsageOf(await api.getCurrentPeriodUsage(AbortSignal.timeout(USAGE_TIMEOUT_MS)));
  } finally {
    api.close();
  }
}

/** Every stored account with its plan usage (asked in parallel, each within 5 s). */
export async function accountStatuses(ctx: CliContext): Promise<AccountStatus[]> {
  const defaultAccount = await ctx.accounts.defaultAccount();
  const entries = await ctx.accounts.list();
  return Promise.all(
    entries.map(async (entry): Promise<AccountStatus> => {
      const record = await ctx.accounts.credentials(entry.name).load();
      const described =
        record === undefined ? undefined : describeCredentials(record, ctx.accounts.location, ctx.now());
      const status: AccountStatus = {
        name: entry.name,
        default: entry.name === defaultAccount,
        email: entry.email,
        userId: entry.userId,
        source: entry.source,
        expiresAt: described?.expiresAt,
        expired: described?.expired,
        usage: null,
      };
      if (described?.expired === true) {
        return { ...status, usageError: "token expired; refreshed on the account's next use" };
      }
      try {
        const usage = await usageOf(ctx, entry.name);
        return usage === undefined ? { ...status, usageError: "not reported by Cursor" } : { ...status, usage };
      } catch (error) {
        return { ...status, usageError: clampForMessage(ProxyError.from(error).message, 160) };
      }
    }),
  );
}

/** `12.0% ($2.40 of $20.00)`, or why there is no figure. */
export function usageText(account: Pick<AccountStatus, "usage" | "usageError">): string {
  const usage = account.usage;
  if (usage === null) return account.usageError ?? "unknown";
  const amounts = `${dollars(usage.usedCents)} of ${dollars(usage.limitCents)}`;
  return usage.usedFraction === null
    ? dollars(usage.usedCents)
    : `${(usage.usedFraction * 100).toFixed(1)}% (${amounts})`;
}

/** When the plan usage resets, or `?`. */
export function resetText(account: Pick<AccountStatus, "usage">): string {
  const end = account.usage?.cycleEnd;
  return end === null || end === undefined ? "?" : shortDate(end);
}
