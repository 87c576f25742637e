/**
 * Scenario 8 (soak): `cursor-bridge serve --upstream emulator` in its own process, two rounds of 60 s at 150
 * concurrent small chat completions (each client sends its next request as soon as the last is answered), then up to
 * 60 s of idle. Targets: no errors, and the server's RSS back under 250 MB within 60 s of idle (issue 25: the heap
 * grew to 656 MB under this load and never gave it back). Full run only (it takes about three minutes).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer, treeRss } from "./memory-budget.js";
import { fmt, type Row, type Table, type TargetResult } from "./report.js";

const MB = 1024 * 1024;

export const SOAK = { concurrency: 150, rounds: 2, roundMs: 60_000, pauseMs: 5_000, idleMb: 250, idleWithinMs: 60_000 };

export interface SoakRound {
  requests: number;
  errors: number;
  requestsPerSecond: number;
  peakMb: number;
}

export interface SoakResult {
  concurrency: number;
  rounds: SoakRound[];
  baselineMb: number;
  /** RSS when the last round's last answer arrived. */
  afterMb: number;
  /** RSS at the end of the idle wait, and how long it took to get under the target (undefined: never). */
  idleMb: number;
  idleUnderTargetAfterMs: number | undefined;
  /** RSS (MB) each second of the idle wait. */
  idleTraceMb: number[];
}

function post(agent: Agent, url: string, body: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request(
      url,
      {
        method: "POST",
        agent,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
        res.on("error", () => resolve(0));
      },
    );
    req.setTimeout(30_000, () => req.destroy());
    req.on("error", () => resolve(0));
    req.end(body);
  });
}

async function round(url: string, concurrency: number, ms: number, pid: number): Promise<SoakRound> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  let requests = 0;
  let errors = 0;
  let peak = 0;
  const deadline = performance.now() + ms;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, await treeRss(pid));
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  })();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      for (let n = 0; performance.now() < deadline; n++) {
        const body = JSON.stringify({
          model: "auto",
          messages: [{ role: "user", content: `soak worker ${worker} request ${n}: say something short` }],
        });
        const status = await post(agent, url, body);
        requests += 1;
        if (status !== 200) errors += 1;
      }
    }),
  );
  const elapsed = performance.now() - started;
  sampling = false;
  await sampler;
  agent.destroy();
  return { requests, errors, requestsPerSecond: (requests * 1000) / elapsed, peakMb: peak / MB };
}

/** Scenario 8. */
export async function runSoak(options: Partial<typeof SOAK> = {}): Promise<SoakResult> {
  const soak = { ...SOAK, ...options };
  const dir = await mkdtemp(join(tmpdir(), "cursor-bridge-soak-"));
  const server = await startServer(dir);
  try {
    const url = `${server.url}/v1/chat/completions`;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const baseline = await treeRss(server.pid);
    const rounds: SoakRound[] = [];
    for (let i = 0; i < soak.rounds; i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, soak.pauseMs));
      rounds.push(await round(url, soak.concurrency, soak.roundMs, server.pid));
    }
    const after = await treeRss(server.pid);
    const idleStart = performance.now();
    let idle = after;
    let underAfter: number | undefined = after < soak.idleMb * MB ? 0 : undefined;
    const trace: number[] = [];
    while (underAfter === undefined && performance.now() - idleStart < soak.idleWithinMs) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      idle = await treeRss(server.pid);
      trace.push(Math.round(idle / MB));
      if (idle < soak.idleMb * MB) underAfter = performance.now() - idleStart;
    }
    return {
      concurrency: soak.concurrency,
      rounds,
      baselineMb: baseline / MB,
      afterMb: after / MB,
      idleMb: idle / MB,
      idleUnderTargetAfterMs: underAfter,
      idleTraceMb: trace,
    };
  } finally {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Table and targets of scenario 8. */
export function soakReport(r: SoakResult): { table: Table; targets: TargetResult[] } {
  const requests = r.rounds.reduce((sum, x) => sum + x.requests, 0);
  const errors = r.rounds.reduce((sum, x) => sum + x.errors, 0);
  const table: Table = {
    title: `8. Soak (${r.rounds.length} × ${SOAK.roundMs / 1000} s at ${r.concurrency} concurrent small chat completions)`,
    header: ["round", "requests", "errors", "requests/s", "peak RSS MB"],
    rows: [
      ...r.rounds.map(
        (x, i): Row => [
          String(i + 1),
          String(x.requests),
          String(x.errors),
          fmt(x.requestsPerSecond, 0),
          fmt(x.peakMb, 0),
        ],
      ),
    ],
    notes: [
      "`cursor-bridge serve --upstream emulator` in its own process; RSS of its whole process tree",
      `RSS: baseline ${fmt(r.baselineMb, 0)} MB, ${fmt(r.afterMb, 0)} MB when the load stopped, ${fmt(r.idleMb, 0)} MB at the end of the idle wait`,
    ],
  };
  const targets: TargetResult[] = [
    {
      scenario: "8. soak",
      target: `${requests} requests, no errors`,
      measured: `${errors} errors`,
      met: errors === 0,
    },
    {
      scenario: "8. soak",
      target: `RSS < ${SOAK.idleMb} MB within ${SOAK.idleWithinMs / 1000} s of idle after the soak`,
      measured:
        r.idleUnderTargetAfterMs === undefined
          ? `${fmt(r.idleMb, 0)} MB after ${SOAK.idleWithinMs / 1000} s (${fmt(r.afterMb, 0)} MB when the load stopped)`
          : `under after ${fmt(r.idleUnderTargetAfterMs / 1000, 1)} s (${fmt(r.afterMb, 0)} MB when the load stopped)`,
      met: r.idleUnderTargetAfterMs !== undefined,
    },
  ];
  return { table, targets };
}

/** `tsx bench/soak.ts`: the soak alone, printed as JSON. */
if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await runSoak();
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
