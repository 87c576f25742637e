/**
 * Scenario: cold start. Each start spawns the command in a throwaway HOME and times, from the spawn:
 * - the "listening on" line (informational: the server prints it before it has loaded the API);
 * - the first `/health` 200 (the API serves; serve holds /health until then), asked as soon as the line is out and
 *   again every 5 ms until it answers 200;
 * - for serve, the first completed chat request (non-streaming, sent right after that 200): the first request pays
 *   for what the start deferred (the upstream connection, the store's first write, cold code paths).
 * Kinds: `node bin/cursor-bridge.js serve` not logged in (the embedded emulator, what `npm start` does out of the box)
 * and logged in (CURSOR_ACCESS_TOKEN issued by a standalone benchmark emulator it is pointed at), `npm start`, and the
 * floors on this machine: `node -e 0`, a bare `node:http` listener started with `node` and with `npm start` from a
 * throwaway package (its first 200 stands for /health), and a bare Hono app on `@hono/node-server` bundled into one
 * file (the framework serve answers with: what any Hono server pays before its first answer).
 *
 * Every repetition starts each kind `perRep` times, round-robin, so a change of load hits all kinds alike; a
 * repetition's value is its median, and a target is met only when the worst repetition's median meets it. serve's
 * targets: its first /health 200 and its first completed chat answer each ≤ the bare Hono app's first 200 + 100 ms,
 * repetition by repetition (the floor started round-robin with it).
 * The first, unmeasured start rebuilds dist/ if it is stale.
 * Standalone: `npx tsx bench/startup.ts [reps] [perRep]`.
 */
import { rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { startRemoteEmulator } from "./remote-emulator.js";
import {
  fmt,
  fmtSpread,
  type Row,
  type Spread,
  spreadOf,
  spreadTarget,
  type Table,
  type TargetResult,
} from "./report.js";
import { bareListenerPackage, type Kind, type StartTimes, startOnce } from "./start-process.js";
import { floorTarget, plus } from "./targets.js";

const NPM = process.platform === "win32" ? "npm.cmd" : "npm";

/**
 * serve's first /health 200 and first completed chat answer within `overHonoMs` of the bare Hono app's first 200;
 * npm start within `npmOverFloorMs` of npm's own floor (npm start of a bare node:http listener).
 */
export const STARTUP_TARGET = { overHonoMs: 100, npmOverFloorMs: 150 };

/** Per kind: spreads over the repetitions of the per-repetition medians (ms). */
export interface StartupKindResult {
  label: string;
  line: Spread;
  health?: Spread;
  chat?: Spread;
}

export interface StartupResult {
  repetitions: number;
  perRepetition: number;
  kinds: Record<string, StartupKindResult>;
  /** npm start − npm floor (first 200), per repetition. */
  npmOverFloor: Spread;
}

const median = (values: readonly number[]) => spreadOf(values).median;

/** Measures `reps` repetitions of `perRep` starts of every kind (after one unmeasured start that rebuilds dist/). */
export async function runStartup(reps: number, perRep: number): Promise<StartupResult> {
  const emulator = await startRemoteEmulator({});
  const bare = bareListenerPackage();
  const serve = ["bin/cursor-bridge.js", "serve", "--port", "0"];
  const kinds: Kind[] = [
    { key: "node", label: "floor: node -e 0", command: process.execPath, args: ["-e", "0"], listens: false },
    {
      key: "bareNode",
      label: "floor: node on a bare node:http listener",
      command: process.execPath,
      args: ["listener.mjs"],
      cwd: bare,
      listens: true,
      healthPath: "/",
    },
    {
      key: "bareNpm",
      label: "floor: npm start of that listener",
      command: NPM,
      args: ["start", "--silent"],
      cwd: bare,
      listens: true,
      healthPath: "/",
    },
    {
      key: "bareHono",
      label: "floor: node on a bare Hono listener (@hono/node-server, bundled)",
      command: process.execPath,
      args: ["hono-listener.mjs"],
      cwd: bare,
      listens: true,
      healthPath: "/",
    },
    {
      key: "bin",
      label: "node bin/cursor-bridge.js serve (embedded emulator)",
      command: process.execPath,
      args: serve,
      listens: true,
      healthPath: "/health",
      chat: true,
    },
    {
      key: "binLoggedIn",
      label: "node bin/cursor-bridge.js serve (logged in, CURSOR_ACCESS_TOKEN)",
      command: process.execPath,
      args: [...serve, "--upstream", "cursor", "--cursor-api-url", emulator.url],
      env: { CURSOR_ACCESS_TOKEN: emulator.accessToken },
      listens: true,
      healthPath: "/health",
      chat: true,
    },
    {
      key: "npm",
      label: "npm start (embedded emulator)",
      command: NPM,
      args: ["start", "--silent", "--", "--port", "0"],
      listens: true,
      healthPath: "/health",
      chat: true,
    },
  ];
  const samples = new Map<string, StartTimes[][]>(kinds.map((k) => [k.key, []]));
  try {
    await startOnce(kinds.find((k) => k.key === "bin") as Kind);
    for (let rep = 0; rep < reps; rep++) {
      for (const k of kinds) samples.get(k.key)?.push([]);
      for (let i = 0; i < perRep; i++) {
        for (const k of kinds)
          samples
            .get(k.key)
            ?.at(-1)
            ?.push(await startOnce(k));
      }
    }
  } finally {
    rmSync(bare, { recursive: true, force: true });
    await emulator.close();
  }
  const result: Record<string, StartupKindResult> = {};
  const perRepMedians = (key: string, pick: (t: StartTimes) => number | undefined) =>
    (samples.get(key) ?? []).map((rep) => median(rep.map((t) => pick(t) ?? Number.NaN)));
  for (const k of kinds) {
    result[k.key] = {
      label: k.label,
      line: spreadOf(perRepMedians(k.key, (t) => t.lineMs)),
      ...(k.healthPath === undefined ? {} : { health: spreadOf(perRepMedians(k.key, (t) => t.healthMs)) }),
      ...(k.chat ? { chat: spreadOf(perRepMedians(k.key, (t) => t.chatMs)) } : {}),
    };
  }
  const npmHealth = perRepMedians("npm", (t) => t.healthMs);
  const floor = perRepMedians("bareNpm", (t) => t.healthMs);
  return {
    repetitions: reps,
    perRepetition: perRep,
    kinds: result,
    npmOverFloor: spreadOf(npmHealth.map((ms, i) => ms - (floor[i] as number))),
  };
}

/** The scenario's table and targets. */
export function startupReport(r: StartupResult): { table: Table; targets: TargetResult[] } {
  const cell = (s: Spread | undefined) => (s === undefined ? "–" : fmtSpread(s, 0));
  const rows = Object.values(r.kinds).map((k): Row => [k.label, cell(k.line), cell(k.health), cell(k.chat)]);
  const table: Table = {
    title: `Cold start (ms from spawn; median of ${r.perRepetition} starts per repetition, ${r.repetitions} repetitions)`,
    header: ["command", "listening line", "first /health 200", "first chat answered"],
    rows,
    notes: [
      "median (lowest–highest) of the repetitions' medians; the kinds start round-robin; each start in a throwaway HOME",
      "the bare listeners' first 200 (GET /) stands for /health; node -e 0 is to its exit",
      "first chat: a non-streaming chat completion sent right after the first /health 200",
    ],
  };
  const floorHono = r.kinds.bareHono?.health;
  const floorNpm = r.kinds.bareNpm?.health;
  const targets: TargetResult[] = [];
  for (const [kind, how] of [
    [r.kinds.bin, "embedded emulator"],
    [r.kinds.binLoggedIn, "logged in"],
  ] as const) {
    for (const [spread, what] of [
      [kind?.health, "first /health 200"],
      [kind?.chat, "first completed chat answer"],
    ] as const) {
      if (spread === undefined) continue;
      targets.push(
        floorTarget({
          scenario: "startup",
          target: `node bin/cursor-bridge.js serve → ${what} ≤ bare Hono floor + ${STARTUP_TARGET.overHonoMs} ms (${how})`,
          measured: spread,
          floor: { name: "a bare Hono app's first 200", spread: floorHono, unit: " ms", digits: 0 },
          bound: { atMost: plus(STARTUP_TARGET.overHonoMs) },
          paired: true,
          unit: " ms",
          digits: 0,
          detail: `node:http floor ${fmt(r.kinds.bareNode?.health?.median ?? Number.NaN, 0)} ms`,
        }),
      );
    }
  }
  targets.push({
    ...spreadTarget(
      "startup",
      `npm start → first /health 200 ≤ npm floor + ${STARTUP_TARGET.npmOverFloorMs} ms (difference of medians)`,
      r.npmOverFloor,
      { atMost: STARTUP_TARGET.npmOverFloorMs },
      `npm start ${fmt(r.kinds.npm?.health?.median ?? Number.NaN, 0)} ms`,
      0,
    ),
    floor: `npm start of a bare node:http listener ${fmt(floorNpm?.median ?? Number.NaN, 0)} ms, paired per repetition`,
  });
  return { table, targets };
}

/** Runs the scenario for bench/run.ts (`--only=startup`) and adds its result, table and targets. */
export async function addStartupScenario(
  into: { results: Record<string, unknown>; tables: Table[]; targets: TargetResult[] },
  log: (line: string) => void,
  reps: number,
  perRep: number,
): Promise<void> {
  log("cold start (to the first /health 200 and the first chat answered)");
  const startup = await runStartup(reps, perRep);
  into.results.startup = startup;
  const report = startupReport(startup);
  into.tables.push(report.table);
  into.targets.push(...report.targets);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const result = await runStartup(Number(process.argv[2] ?? 3), Number(process.argv[3] ?? 3));
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
