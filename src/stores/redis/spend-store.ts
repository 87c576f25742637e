/**
 * The Redis {@link SpendStore}: one hash per key and period (`<prefix>spend:<period>:<key id>`), incremented field
 * by field in one MULTI, so the totals after each request (and from them the totals before it) are exact even with
 * several instances adding at once. A hash expires a while after its period is over (day 8 days, week 5 weeks,
 * month 13 months).
 */
import { SPEND_FIELDS, spendFrom } from "../spend-totals.js";
import type { SpendStore, SpendTotals } from "../types.js";
import { type StoreClient, storeCall } from "./client.js";

const DAY_S = 86_400;
const KEEP_S: Record<string, number> = { day: 8 * DAY_S, week: 35 * DAY_S, month: 400 * DAY_S };

/** Spend shared by every instance on the store. */
export function createRedisSpendStore(client: StoreClient): SpendStore {
  const keyOf = (keyId: string, period: string) => `${client.prefix}spend:${period}:${keyId}`;
  return {
    async add(keyId, period, entry) {
      const key = keyOf(keyId, period);
      const after = await storeCall(client, async () => {
        const multi = client.redis.multi();
        for (const field of SPEND_FIELDS) multi.hincrby(key, field, Math.round(entry[field]));
        multi.expire(key, KEEP_S[period.split(":")[0] ?? ""] ?? 400 * DAY_S);
        const replies = (await multi.exec()) ?? [];
        const totals: Record<string, number> = {};
        SPEND_FIELDS.forEach((field, index) => {
          const [error, value] = replies[index] ?? [new Error("the transaction was not run"), 0];
          if (error) throw error;
          totals[field] = Number(value);
        });
        return spendFrom(totals);
      });
      const before = { ...after };
      for (const field of SPEND_FIELDS) before[field] = after[field] - Math.round(entry[field]);
      return { before, after };
    },
    async get(keyId, period): Promise<SpendTotals> {
      const record = await storeCall(client, () => client.redis.hgetall(keyOf(keyId, period)));
      return spendFrom(record);
    },
  };
}
