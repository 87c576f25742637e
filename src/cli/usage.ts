/**
 * `cursor-bridge usage`: `aiserver.v1.DashboardService/GetCurrentPeriodUsage` (docs/protocol.md §1.3) as plan usage
 * with a bar and the billing cycle. Guesses, stated in the output: amounts are cents (§1.3 says "likely cents") and
 * the cycle bounds are epoch milliseconds (values below 1e11 are taken as seconds).
 */
import type { GetCurrentPeriodUsageResponse } from "../gen/aiserver/v1/dashboard_pb.js";
import type { PlanUsage } from "../surfaces/kit/deps.js";
import { createLogger } from "../util/logger.js";
import { COMMON_OPTIONS_HELP, parseCommandLine } from "./args.js";
import { type Command, EXIT } from "./command.js";
import { createCliContext } from "./context.js";
import { progressBar, shortDate } from "./format.js";
import { type CliIo, formatFields, type Style } from "./io.js";
import { namingCursorUrl, openServedApi } from "./upstream.js";

const HELP = `Usage: cursor-bridge usage [options]

Show this billing cycle's plan usage from Cursor (what the Cursor dashboard shows), with a bar, plus on-demand
spend limits when your plan has them. Amounts are shown in dollars, assuming Cursor reports cents. Before you log
in, it shows the built-in emulator's scripted usage instead, labelled as such.

${COMMON_OPTIONS_HELP}

Examples:
  cursor-bridge usage
  cursor-bridge usage --json | jq .planUsage.usedFraction
`;

/** The JSON shape printed by `usage --json` (with `upstream`: "cursor", or "emulator" before a login). */
export interface UsageReport {
  billingCycle: { start: string | null; end: string | null };
  planUsage: {
    totalSpend: number;
    includedSpend: number;
    bonusSpend: number;
    remaining: number;
    limit: number;
    remainingBonus: boolean;
    bonusTooltip: string;
    /** totalSpend / limit, null when there is no limit. */
    usedFraction: number | null;
    /** Auto, API and total usage in percent (cursor-protocol-addendum-3.md U1); null when Cursor sends none. */
    autoPercentUsed: number | null;
    apiPercentUsed: number | null;
    totalPercentUsed: number | null;
    /** The Auto and API buckets (cents); null when Cursor sends none. */
    autoSpend: number | null;
    apiSpend: number | null;
    autoLimit: number | null;
    apiLimit: number | null;
  } | null;
  spendLimitUsage: {
    totalSpend: number;
    pooledLimit: number;
    pooledUsed: number;
    pooledRemaining: number;
    individualLimit: number;
    individualUsed: number;
    individualRemaining: number;
    limitType: string;
  } | null;
  displayThreshold: number;
  enabled: boolean;
  displayMessage: string;
  /** Unit of the amounts (a guess; see docs/protocol.md §1.3). */
  unit: "cents";
}

/** Epoch ms (or s) → ISO; null for 0 (unset). */
export function cycleBound(value: bigint): string | null {
  if (value <= 0n) return null;
  const number = Number(value);
  return new Date(number < 1e11 ? number * 1000 : number).toISOString();
}

/** Converts the protobuf answer into the printable report. */
export function toUsageReport(response: GetCurrentPeriodUsageResponse): UsageReport {
  const plan = response.planUsage;
  const spend = response.spendLimitUsage;
  return {
    billingCycle: { start: cycleBound(response.billingCycleStart), end: cycleBound(response.billingCycleEnd) },
    planUsage:
      plan === undefined
        ? null
        : {
            totalSpend: plan.totalSpend,
            includedSpend: plan.includedSpend,
            bonusSpend: plan.bonusSpend,
            remaining: plan.remaining,
            limit: plan.limit,
            remainingBonus: plan.remainingBonus,
            bonusTooltip: plan.bonusTooltip,
            usedFraction: plan.limit > 0 ? plan.totalSpend / plan.limit : null,
            ...percentagesOf(plan),
            ...bucketsOf(plan),
          },
    spendLimitUsage:
      spend === undefined
        ? null
        : {
            totalSpend: spend.totalSpend,
            pooledLimit: spend.pooledLimit,
            pooledUsed: spend.pooledUsed,
            pooledRemaining: spend.pooledRemaining,
            individualLimit: spend.individualLimit,
            individualUsed: spend.individualUsed,
            individualRemaining: spend.individualRemaining,
            limitType: spend.limitType,
          },
    displayThreshold: response.displayThreshold,
    enabled: response.enabled,
    displayMessage: response.displayMessage,
    unit: "cents",
  };
}

type PlanFields = NonNullable<GetCurrentPeriodUsageResponse["planUsage"]>;

/** U1's percentages; all null when Cursor sent none (proto3 doubles are 0 when absent). */
function percentagesOf(plan: PlanFields) {
  const sent = plan.autoPercentUsed !== 0 || plan.apiPercentUsed !== 0 || plan.totalPercentUsed !== 0;
  return {
    autoPercentUsed: sent ? plan.autoPercentUsed : null,
    apiPercentUsed: sent ? plan.apiPercentUsed : null,
    totalPercentUsed: sent ? plan.totalPercentUsed : null,
  };
}

/** U1's Auto and API buckets; all null when Cursor sent none. */
function bucketsOf(plan: PlanFields) {
  const sent = plan.autoLimit !== 0 || plan.apiLimit !== 0 || plan.autoSpend !== 0 || plan.apiSpend !== 0;
  return {
    autoSpend: sent ? plan.autoSpend : null,
    apiSpend: sent ? plan.apiSpend : null,
    autoLimit: sent ? plan.autoLimit : null,
    apiLimit: sent ? plan.apiLimit : null,
  };
}

/** The status page's view of the usage (server/deps.ts PlanUsage); undefined when Cursor reports no plan usage. */
export function planUsageOf(response: GetCurrentPeriodUsageResponse): PlanUsage | undefined {
  const report = toUsageReport(response);
  const plan = report.planUsage;
  if (plan === null) return undefined;
  return {
    usedFraction: plan.usedFraction,
    usedCents: plan.totalSpend,
    limitCents: plan.limit,
    remainingCents: plan.remaining,
    cycleStart: report.billingCycle.start,
    cycleEnd: report.billingCycle.end,
    message: report.displayMessage,
    autoPercentUsed: plan.autoPercentUsed,
    apiPercentUsed: plan.apiPercentUsed,
    totalPercentUsed: plan.totalPercentUsed,
    buckets:
      plan.autoSpend === null || plan.apiSpend === null || plan.autoLimit === null || plan.apiLimit === null
        ? null
        : {
            autoSpendCents: plan.autoSpend,
            apiSpendCents: plan.apiSpend,
            autoLimitCents: plan.autoLimit,
            apiLimitCents: plan.apiLimit,
          },
    onDemand:
      report.spendLimitUsage === null || report.spendLimitUsage.individualLimit <= 0
        ? null
        : {
            usedCents: report.spendLimitUsage.individualUsed,
            limitCents: report.spendLimitUsage.individualLimit,
            limitType: report.spendLimitUsage.limitType,
          },
  };
}

/** 1234 → "$12.34". */
export function dollars(cents: number): string {
  return `$${(cents / 100).toFixed(2)}`;
}

function colourFor(style: Style, fraction: number): (text: string) => string {
  if (fraction >= 0.9) return style.red;
  if (fraction >= 0.7) return style.yellow;
  return style.green;
}

/** The human rendering of a report. */
export function formatUsage(report: UsageReport, style: Style): string {
  const lines: string[] = [];
  const { start, end } = report.billingCycle;
  lines.push(`Billing cycle: ${start === null ? "?" : shortDate(start)} → ${end === null ? "?" : shortDate(end)}\n`);
  const plan = report.planUsage;
  if (plan === null) lines.push("Plan usage: not reported by Cursor\n");
  else if (plan.usedFraction === null) lines.push(`Plan usage: ${dollars(plan.totalSpend)} (no plan limit reported)\n`);
  else {
    const percent = `${(plan.usedFraction * 100).toFixed(1)}%`;
    const bar = colourFor(style, plan.usedFraction)(progressBar(plan.usedFraction));
    lines.push(`Plan usage: ${bar} ${percent}\n`);
    const fields: [string, string][] = [
      ["Used", `${dollars(plan.totalSpend)} of ${dollars(plan.limit)}`],
      ["Remaining", dollars(plan.remaining)],
      ["Included", dollars(plan.includedSpend)],
    ];
    if (plan.bonusSpend > 0) fields.push(["Bonus", dollars(plan.bonusSpend)]);
    lines.push(formatFields(fields));
  }
  if (plan !== null && plan.totalPercentUsed !== null) {
    const pct = (value: number | null) => (value === null ? "?" : `${value.toFixed(1)}%`);
    const bucket = (spend: number | null, limit: number | null) =>
      spend === null || limit === null ? "" : ` (${dollars(spend)} of ${dollars(limit)})`;
    lines.push(
      formatFields([
        ["Auto", `${pct(plan.autoPercentUsed)}${bucket(plan.autoSpend, plan.autoLimit)}`],
        ["API", `${pct(plan.apiPercentUsed)}${bucket(plan.apiSpend, plan.apiLimit)}`],
        ["Total", pct(plan.totalPercentUsed)],
      ]),
    );
  }
  const spend = report.spendLimitUsage;
  if (spend !== null && (spend.individualLimit > 0 || spend.pooledLimit > 0)) {
    const fields: [string, string][] = [["On-demand spend", dollars(spend.totalSpend)]];
    if (spend.individualLimit > 0) {
      fields.push(["Your limit", `${dollars(spend.individualUsed)} of ${dollars(spend.individualLimit)}`]);
    }
    if (spend.pooledLimit > 0)
      fields.push(["Team pool", `${dollars(spend.pooledUsed)} of ${dollars(spend.pooledLimit)}`]);
    lines.push(formatFields(fields));
  }
  if (report.displayMessage !== "") lines.push(`${report.displayMessage}\n`);
  lines.push(style.dim("Amounts assume Cursor reports cents.\n"));
  return lines.join("");
}

async function run(argv: string[], io: CliIo): Promise<number> {
  const { flags } = parseCommandLine("usage", argv);
  const ctx = await createCliContext(io, flags);
  const logger = createLogger({ level: "warn", sink: (line) => io.err(`${line}\n`) });
  const served = await openServedApi(ctx, logger);
  let report: UsageReport;
  try {
    report = toUsageReport(await served.api.getCurrentPeriodUsage());
  } catch (error) {
    throw namingCursorUrl(error, served, ctx.config.cursorApiUrl);
  } finally {
    await served.close();
  }
  if (ctx.json) {
    ctx.printJson({ upstream: served.kind, ...report });
    return EXIT.ok;
  }
  if (served.kind === "emulator") {
    io.out(
      `${ctx.style.yellow("Not logged in:")} the built-in Cursor emulator's usage (scripted), not your plan's; ` +
        "run `cursor-bridge login` to see yours.\n",
    );
  }
  io.out(formatUsage(report, ctx.style));
  return EXIT.ok;
}

/** `cursor-bridge usage`. */
export const usageCommand: Command = {
  name: "usage",
  summary: "Show this billing cycle's Cursor plan usage",
  help: HELP,
  options: {},
  run,
};
