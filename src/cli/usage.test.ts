import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { GetCurrentPeriodUsageResponseSchema } from "../gen/aiserver/v1/dashboard_pb.js";
import { createStyle } from "./io.js";
import { cycleBound, dollars, formatUsage, planUsageOf, toUsageReport } from "./usage.js";

describe("usage report", () => {
  it("reads cycle bounds as epoch ms, or seconds when small, and 0 as unknown", () => {
    expect(cycleBound(1_767_225_600_000n)).toBe("2026-01-01T00:00:00.000Z");
    expect(cycleBound(1_767_225_600n)).toBe("2026-01-01T00:00:00.000Z");
    expect(cycleBound(0n)).toBeNull();
  });

  it("computes the used fraction and renders a bar, spend limits and the server message", () => {
    const response = create(GetCurrentPeriodUsageResponseSchema, {
      billingCycleStart: 1_767_225_600_000n,
      billingCycleEnd: 1_769_904_000_000n,
      planUsage: { totalSpend: 1500, includedSpend: 1500, remaining: 500, limit: 2000 },
      spendLimitUsage: { totalSpend: 250, individualLimit: 1000, individualUsed: 250, limitType: "user" },
      displayMessage: "You have used 75% of your plan.",
    });
    const report = toUsageReport(response);
    expect(report.planUsage?.usedFraction).toBe(0.75);
    const text = formatUsage(report, createStyle(false));
    expect(text).toContain("Billing cycle: 2026-01-01 00:00 UTC → 2026-02-01 00:00 UTC");
    expect(text).toContain(`Plan usage: [${"#".repeat(23)}${"-".repeat(7)}] 75.0%`);
    expect(text).toMatch(/Used\s+\$15\.00 of \$20\.00/);
    expect(text).toMatch(/Your limit\s+\$2\.50 of \$10\.00/);
    expect(text).toContain("You have used 75% of your plan.");
  });

  it("handles a missing plan and a plan without limit", () => {
    expect(formatUsage(toUsageReport(create(GetCurrentPeriodUsageResponseSchema, {})), createStyle(false))).toContain(
      "Plan usage: not reported by Cursor",
    );
    const noLimit = toUsageReport(create(GetCurrentPeriodUsageResponseSchema, { planUsage: { totalSpend: 10 } }));
    expect(noLimit.planUsage?.usedFraction).toBeNull();
    expect(dollars(1234)).toBe("$12.34");
  });

  it("shows Auto, API and total percentages with the buckets' spend and limits (U1), and none when absent", () => {
    const response = create(GetCurrentPeriodUsageResponseSchema, {
      planUsage: {
        totalSpend: 900,
        limit: 2000,
        autoSpend: 300,
        apiSpend: 600,
        autoLimit: 2000,
        apiLimit: 2000,
        autoPercentUsed: 15,
        apiPercentUsed: 30,
        totalPercentUsed: 45,
      },
    });
    const report = toUsageReport(response);
    expect(report.planUsage).toMatchObject({ autoPercentUsed: 15, apiPercentUsed: 30, totalPercentUsed: 45 });
    const text = formatUsage(report, createStyle(false));
    expect(text).toMatch(/Auto\s+15\.0% \(\$3\.00 of \$20\.00\)/);
    expect(text).toMatch(/API\s+30\.0% \(\$6\.00 of \$20\.00\)/);
    expect(text).toMatch(/Total\s+45\.0%/);
    expect(planUsageOf(response)).toMatchObject({
      autoPercentUsed: 15,
      apiPercentUsed: 30,
      totalPercentUsed: 45,
      buckets: { autoSpendCents: 300, apiSpendCents: 600, autoLimitCents: 2000, apiLimitCents: 2000 },
    });
    const old = toUsageReport(create(GetCurrentPeriodUsageResponseSchema, { planUsage: { totalSpend: 5, limit: 10 } }));
    expect(old.planUsage?.totalPercentUsed).toBeNull();
    expect(formatUsage(old, createStyle(false))).not.toContain("Total");
  });
});
