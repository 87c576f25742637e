/**
 * The Redis {@link SpendStore}: one hash per key and period (`<prefix>spend:<period>:<key id>`), incremented field
 * by field in one step, so the totals after each request (and from them the totals before it) are exact even with
 * several instances adding at once.
 *
 * A spend hash carries no expiry, so Redis never evicts it under memory pressure: with the `volatile-lru` policy the
 * deployment uses (docs/team.md), a key that had been idle longer than the least recently used conversation lost its
 * spend when Redis needed room, and started its period again from zero. Instead each hash is listed in the sorted set
 * `<prefix>spend:periods` (no expiry either), scored by when it may go (day 8 days, week 5 weeks, month 13 months
 * after its last settle), and every settle removes a few hashes whose time has come.
 *
 * Reservations of running requests: a sorted set per key and period (`…:resv`), member `<id>:<micro-dollars>`
 * scored by lease expiry; one Lua script drops the expired ones, checks spend + held + this against the budget and
 * reserves, so instances sharing the store never admit past the budget together. Settling is a second script that
 * marks the id settled (`<prefix>settled:<id>`, kept two days), drops the reservation and adds the spend — once per
 * id, so a settle retried after an outage never counts twice.
 *
 * Running requests' cost so far (SpendStore.noteRunning): a hash per key and period (`…:run`), field the request id,
 * value its lease expiry (epoch ms, {@link RUN_LEASE_MS} ahead, renewed at each note) and its totals. A settle removes
 * the request's field. A field whose lease ran out belongs to a request whose instance died (it notes every 2 s):
 * it is charged, once per id (the same `settled:<id>` marker a settle sets, holding what it charged), and removed:
 * by the next reservation of that key and period, and by the sweep every instance runs
 * ({@link SpendStore.chargeLapsed}), so the key's spend (budgets, /admin, /metrics) is right without waiting for its
 * next request. The sweep finds the run hashes in the sorted set `<prefix>spend:running` (member
 * `<seconds kept>:<spend hash>`, scored by the earliest lease that may lapse there), so it reads nothing while no
 * note has lapsed. A settle that still comes (the instance was only cut off from the store for longer than the lease)
 * replaces that estimate by the real cost, once. An instance that stops with requests still unsettled
 * ({@link SpendStore.chargeStopped}) notes them as lapsed already and sweeps at once. The hashes have no expiry, like
 * the spend's.
 */
import { SPEND_FIELDS, spendFrom } from "../spend-totals.js";
import type { RunningCost, SpendStore, SpendTotals } from "../types.js";
import { type StoreClient, storeCall } from "./client.js";

const DAY_S = 86_400;
const KEEP_S: Record<string, number> = { day: 8 * DAY_S, week: 35 * DAY_S, month: 400 * DAY_S };
const SETTLED_KEEP_S = 2 * DAY_S;
/** How long a running request's noted cost stays unclaimed after its last note before it is charged. */
export const RUN_LEASE_MS = 30_000;

/** Charges the lapsed fields of the run hash KEYS[3] to the spend hash KEYS[1] (see the module comment). */
const CHARGE_LAPSED = `
local FIELDS = {${SPEND_FIELDS.map((field) => `"${field}"`).join(", ")}}
local function chargeLapsed(hash, run, periods, nowMs, nowS, keep, settledPrefix, settledKeep)
  local entries, charged, earliest = redis.call("HGETALL", run), 0, nil
  for i = 1, #entries, 2 do
    local id, parts = entries[i], {}
    for part in string.gmatch(entries[i + 1], "[^,]+") do parts[#parts + 1] = part end
    local lease = tonumber(parts[1])
    if lease <= nowMs then
      redis.call("HDEL", run, id)
      if redis.call("SET", settledPrefix .. id, "lapsed:" .. entries[i + 1], "NX", "EX", settledKeep) then
        for j, name in ipairs(FIELDS) do redis.call("HINCRBY", hash, name, parts[j + 1] or "0") end
        redis.call("PERSIST", hash)
        redis.call("ZADD", periods, nowS + keep, hash)
        charged = charged + 1
      end
    elseif earliest == nil or lease < earliest then
      earliest = lease
    end
  end
  return charged, earliest
end
`;

const RESERVE = `${CHARGE_LAPSED}
local now, id, amount, budget, lease = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
chargeLapsed(KEYS[1], KEYS[3], KEYS[4], tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8]), ARGV[9], tonumber(ARGV[10]))
redis.call("ZREMRANGEBYSCORE", KEYS[2], "-inf", now)
local held = 0
for _, member in ipairs(redis.call("ZRANGE", KEYS[2], 0, -1)) do
  held = held + tonumber(string.match(member, ":(%d+)$"))
end
local spent = tonumber(redis.call("HGET", KEYS[1], "microUsd") or "0")
local admitted = 0
if budget < 0 or spent + held + amount <= budget then
  redis.call("ZADD", KEYS[2], now + lease, id .. ":" .. amount)
  redis.call("PEXPIRE", KEYS[2], lease)
  held = held + amount
  admitted = 1
end
return {admitted, held, redis.call("HGETALL", KEYS[1])}
`;

/**
 * Charges the lapsed notes of up to ARGV[5] run hashes listed in KEYS[1] (`spend:running`) whose earliest lease is
 * past, and lists each again under the earliest lease it still holds (or drops it, empty). Answers how many requests
 * it charged and how many hashes it looked at.
 */
const SWEEP = `${CHARGE_LAPSED}
local nowMs, nowS, settledPrefix, settledKeep = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])
local charged, members = 0, redis.call("ZRANGEBYSCORE", KEYS[1], "-inf", nowMs, "LIMIT", 0, tonumber(ARGV[5]))
for _, member in ipairs(members) do
  local keep, hash = string.match(member, "^(%d+):(.*)$")
  local count, earliest = chargeLapsed(hash, hash .. ":run", KEYS[2], nowMs, nowS, tonumber(keep), settledPrefix, settledKeep)
  charged = charged + count
  if earliest == nil then redis.call("ZREM", KEYS[1], member) else redis.call("ZADD", KEYS[1], earliest, member) end
end
return {charged, #members}
`;

/** How many run hashes one script call looks at, at most (a sweep calls it again while a batch comes back full). */
const SWEEP_BATCH = 100;

/**
 * Adds the fields in ARGV[first…] to the spend hash `hash`, which keeps no expiry (see the module comment): it is
 * listed in `periods` until `now` + `keep` (seconds), and up to 16 listed hashes whose time is past are removed.
 */
const ADD_TO_HASH = `
local function addToHash(hash, periods, keep, now, first)
  for i = first, #ARGV, 2 do redis.call("HINCRBY", hash, ARGV[i], ARGV[i + 1]) end
  redis.call("PERSIST", hash)
  redis.call("ZADD", periods, now + keep, hash)
  for _, old in ipairs(redis.call("ZRANGEBYSCORE", periods, "-inf", now, "LIMIT", 0, 16)) do
    redis.call("DEL", old)
    redis.call("ZREM", periods, old)
  end
end
`;

const SETTLE = `${ADD_TO_HASH}
local FIELDS = {${SPEND_FIELDS.map((field) => `"${field}"`).join(", ")}}
redis.call("HDEL", KEYS[5], ARGV[1])
local applied, lapsed = 0, ""
if redis.call("SET", KEYS[3], "1", "NX", "EX", tonumber(ARGV[2])) then
  applied = 1
else
  local marker = redis.call("GET", KEYS[3])
  if marker and string.sub(marker, 1, 7) == "lapsed:" then
    applied, lapsed = 1, string.sub(marker, 8)
    redis.call("SET", KEYS[3], "1", "EX", tonumber(ARGV[2]))
  end
end
if applied == 1 then
  for _, member in ipairs(redis.call("ZRANGE", KEYS[2], 0, -1)) do
    if string.sub(member, 1, #ARGV[1] + 1) == ARGV[1] .. ":" then redis.call("ZREM", KEYS[2], member) end
  end
  if lapsed == "" then
    addToHash(KEYS[1], KEYS[4], tonumber(ARGV[3]), tonumber(ARGV[4]), 5)
  else
    -- Charged by estimate when its note lapsed (chargeLapsed): the real cost replaces that estimate.
    local parts, charged = {}, {}
    for part in string.gmatch(lapsed, "[^,]+") do parts[#parts + 1] = part end
    for j, name in ipairs(FIELDS) do charged[name] = tonumber(parts[j + 1] or "0") end
    for i = 5, #ARGV, 2 do
      redis.call("HINCRBY", KEYS[1], ARGV[i], tonumber(ARGV[i + 1]) - (charged[ARGV[i]] or 0))
    end
    addToHash(KEYS[1], KEYS[4], tonumber(ARGV[3]), tonumber(ARGV[4]), #ARGV + 1)
  end
end
return {applied, redis.call("HGETALL", KEYS[1]), lapsed}
`;

/** {@link SETTLE} without the once-per-id marker and the reservation (the store's `add`). */
const ADD = `${ADD_TO_HASH}
addToHash(KEYS[1], KEYS[2], tonumber(ARGV[1]), tonumber(ARGV[2]), 3)
return redis.call("HGETALL", KEYS[1])
`;

const RENEW = `
local now, upto = tonumber(ARGV[1]), tonumber(ARGV[1]) + tonumber(ARGV[2])
for _, member in ipairs(redis.call("ZRANGEBYSCORE", KEYS[1], now, "+inf")) do
  local id = string.match(member, "^(.*):%d+$")
  for i = 3, #ARGV do
    if ARGV[i] == id then redis.call("ZADD", KEYS[1], "XX", upto, member) end
  end
end
redis.call("PEXPIRE", KEYS[1], tonumber(ARGV[2]))
return 1
`;

interface ScriptedRedis {
  cursorBridgeReserve(...args: Array<string | number>): Promise<unknown>;
  cursorBridgeSpendSettle(...args: Array<string | number>): Promise<unknown>;
  cursorBridgeSpendRenew(...args: Array<string | number>): Promise<unknown>;
  cursorBridgeSpendAdd(...args: Array<string | number>): Promise<unknown>;
  cursorBridgeSpendSweep(...args: Array<string | number>): Promise<unknown>;
}

/** A flat HGETALL reply as totals. */
function totalsOf(flat: unknown): SpendTotals {
  const record: Record<string, string> = {};
  const list = Array.isArray(flat) ? (flat as unknown[]) : [];
  for (let i = 0; i + 1 < list.length; i += 2) record[String(list[i])] = String(list[i + 1]);
  return spendFrom(record);
}

/** Spend shared by every instance on the store. */
export function createRedisSpendStore(client: StoreClient, options: { now?: () => number } = {}): SpendStore {
  const redis = client.redis as unknown as ScriptedRedis & typeof client.redis;
  if (typeof redis.cursorBridgeReserve !== "function") {
    client.redis.defineCommand("cursorBridgeReserve", { numberOfKeys: 4, lua: RESERVE });
    client.redis.defineCommand("cursorBridgeSpendSettle", { numberOfKeys: 5, lua: SETTLE });
    client.redis.defineCommand("cursorBridgeSpendAdd", { numberOfKeys: 2, lua: ADD });
    client.redis.defineCommand("cursorBridgeSpendRenew", { numberOfKeys: 1, lua: RENEW });
    client.redis.defineCommand("cursorBridgeSpendSweep", { numberOfKeys: 2, lua: SWEEP });
  }
  const keyOf = (keyId: string, period: string) => `${client.prefix}spend:${period}:${keyId}`;
  const keepOf = (period: string) => KEEP_S[period.split(":")[0] ?? ""] ?? 400 * DAY_S;
  const periodsKey = `${client.prefix}spend:periods`;
  const runningKey = `${client.prefix}spend:running`;
  const clock = options.now ?? Date.now;
  const nowS = () => Math.floor(clock() / 1000);
  return {
    async add(keyId, period, entry) {
      const key = keyOf(keyId, period);
      const fields = SPEND_FIELDS.flatMap((field) => [field, Math.round(entry[field])]);
      const flat = await storeCall(client, () =>
        redis.cursorBridgeSpendAdd(key, periodsKey, keepOf(period), nowS(), ...fields),
      );
      const after = totalsOf(flat);
      const before = { ...after };
      for (const field of SPEND_FIELDS) before[field] = after[field] - Math.round(entry[field]);
      return { before, after };
    },
    async get(keyId, period): Promise<SpendTotals> {
      const record = await storeCall(client, () => client.redis.hgetall(keyOf(keyId, period)));
      return spendFrom(record);
    },
    async reserve(input) {
      const key = keyOf(input.keyId, input.period);
      const [admitted, held, flat] = (await storeCall(client, () =>
        redis.cursorBridgeReserve(
          key,
          `${key}:resv`,
          `${key}:run`,
          periodsKey,
          input.now,
          input.id,
          Math.max(0, Math.round(input.microUsd)),
          input.budgetMicroUsd === undefined ? -1 : Math.round(input.budgetMicroUsd),
          input.leaseMs,
          clock(),
          nowS(),
          keepOf(input.period),
          `${client.prefix}settled:`,
          SETTLED_KEEP_S,
        ),
      )) as [number, number, unknown];
      return { admitted: Number(admitted) === 1, reservedMicroUsd: Number(held), spent: totalsOf(flat) };
    },
    async settle({ keyId, period, id, entry }) {
      const key = keyOf(keyId, period);
      const fields = SPEND_FIELDS.flatMap((field) => [field, Math.round(entry[field])]);
      const [applied, flat, lapsed] = (await storeCall(client, () =>
        redis.cursorBridgeSpendSettle(
          key,
          `${key}:resv`,
          `${client.prefix}settled:${id}`,
          periodsKey,
          `${key}:run`,
          id,
          SETTLED_KEEP_S,
          keepOf(period),
          nowS(),
          ...fields,
        ),
      )) as [number, unknown, string];
      const after = totalsOf(flat);
      if (Number(applied) !== 1) return { before: { ...after }, after, applied: false };
      // What a lapsed note charged before (its lease expiry first, then the fields): only the difference was added.
      const charged = typeof lapsed === "string" && lapsed !== "" ? lapsed.split(",").slice(1).map(Number) : [];
      const before = { ...after };
      SPEND_FIELDS.forEach((field, i) => {
        before[field] = after[field] - Math.round(entry[field]) + (charged[i] ?? 0);
      });
      return { before, after, applied: true };
    },
    async renew(keyId, period, ids, now, leaseMs) {
      if (ids.length === 0) return;
      const key = keyOf(keyId, period);
      await storeCall(client, () => redis.cursorBridgeSpendRenew(`${key}:resv`, now, leaseMs, ...ids));
    },
    noteRunning(running) {
      // Best effort: a note lost while the store is unreachable is made again at the next round.
      void note(running, clock() + RUN_LEASE_MS).catch(() => undefined);
    },
    async chargeStopped(running) {
      // Their process stops: noted as lapsed already, and charged now rather than when a sweep comes by.
      const now = clock();
      if (running.length > 0) await note(running, now);
      await sweep(now);
    },
    chargeLapsed: () => sweep(clock()),
  };

  /** Notes `running` with leases until `until`, each run hash listed in `spend:running` (atomically with it). */
  async function note(running: readonly RunningCost[], until: number): Promise<void> {
    const groups = new Map<string, { member: string; fields: Record<string, string> }>();
    for (const { keyId, period, id, entry } of running) {
      const hash = keyOf(keyId, period);
      const group = groups.get(hash) ?? { member: `${keepOf(period)}:${hash}`, fields: {} };
      group.fields[id] = [until, ...SPEND_FIELDS.map((field) => Math.round(entry[field]))].join(",");
      groups.set(hash, group);
    }
    if (groups.size === 0) return;
    const transaction = client.redis.multi();
    for (const [hash, { member, fields }] of groups) {
      transaction.hset(`${hash}:run`, fields);
      // LT: a note that lapses sooner (another instance's, not renewed since) keeps its place.
      transaction.zadd(runningKey, "LT", until, member);
    }
    await storeCall(client, () => transaction.exec());
  }

  /** Charges the notes whose lease ran out by `now`, every key's (see {@link SWEEP}); how many requests it charged. */
  async function sweep(now: number): Promise<number> {
    let charged = 0;
    for (;;) {
      const [count, looked] = (await storeCall(client, () =>
        redis.cursorBridgeSpendSweep(
          runningKey,
          periodsKey,
          now,
          Math.floor(now / 1000),
          `${client.prefix}settled:`,
          SETTLED_KEEP_S,
          SWEEP_BATCH,
        ),
      )) as [number, number];
      charged += Number(count);
      // A full batch may have left lapsed hashes behind: sweep on (each one swept is listed past `now` or dropped).
      if (Number(looked) < SWEEP_BATCH) return charged;
    }
  }
}
