/**
 * Sends the HTTP fuzzers' cases (fuzz.test.ts over the API doors, fuzz-admin.test.ts over the admin API) and tallies
 * them: a fixed number of workers over one keep-alive agent, each answer judged by the fuzzer, the first failures kept
 * with their case, and the counts by status and by kind printed at the end.
 */
import { type Agent, request } from "node:http";

/** One HTTP case. */
export interface HttpCase {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
  /** The kind of case, counted in the printed summary. */
  label: string;
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** No answer may take longer than this (a hang, or one request stalling the others). */
export const MAX_ANSWER_MS = 30_000;

/** Sends one case over `agent` to 127.0.0.1:`port`; rejects when no answer comes within {@link MAX_ANSWER_MS}. */
export function send(agent: Agent, port: number, req: HttpCase): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...req.headers };
    if (req.body !== undefined) headers["content-length"] = req.body.length;
    const outgoing = request({ agent, host: "127.0.0.1", port, method: req.method, path: req.path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }),
      );
      res.on("error", reject);
    });
    outgoing.setTimeout(MAX_ANSWER_MS, () => outgoing.destroy(new Error(`no answer within ${MAX_ANSWER_MS / 1000} s`)));
    outgoing.on("error", reject);
    outgoing.end(req.body);
  });
}

/** A `GET /health` case. */
export const healthCase = (port: number): HttpCase => ({
  method: "GET",
  path: "/health",
  headers: { host: `127.0.0.1:${port}` },
  body: undefined,
  label: "health",
});

export interface FuzzTally {
  byStatus: Map<number, number>;
  byLabel: Map<string, number>;
  /** The first 20 cases whose answer the judge found wrong (or that got none). */
  failures: string[];
  slowest: { ms: number; label: string };
  seconds: string;
}

/** `status:count …` and `kind:count …`, sorted, for the printed summary. */
export const counted = <K extends string | number>(counts: Map<K, number>): string =>
  [...counts.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, n]) => `${key}:${n}`)
    .join(" ");

/**
 * Sends every case with `concurrency` workers and judges each answer (`judge` returns what is wrong with it, or
 * undefined).
 */
export async function runCases<C extends HttpCase>(
  agent: Agent,
  port: number,
  cases: readonly C[],
  concurrency: number,
  judge: (req: C, answer: Answer) => string | undefined,
): Promise<FuzzTally> {
  const tally: FuzzTally = {
    byStatus: new Map(),
    byLabel: new Map(),
    failures: [],
    slowest: { ms: 0, label: "" },
    seconds: "",
  };
  let next = 0;
  const started = Date.now();
  const worker = async () => {
    while (next < cases.length) {
      const index = next++;
      const req = cases[index] as C;
      let problem: string | undefined;
      let status = 0;
      const sent = Date.now();
      try {
        const answer = await send(agent, port, req);
        const took = Date.now() - sent;
        if (took > tally.slowest.ms) tally.slowest = { ms: took, label: req.label };
        status = answer.status;
        problem = judge(req, answer);
        if (problem !== undefined) problem += ` — body ${answer.body.slice(0, 300)}`;
      } catch (error) {
        problem = `no answer: ${(error as Error).message}`;
      }
      tally.byLabel.set(req.label, (tally.byLabel.get(req.label) ?? 0) + 1);
      tally.byStatus.set(status, (tally.byStatus.get(status) ?? 0) + 1);
      if (problem !== undefined && tally.failures.length < 20) {
        tally.failures.push(
          `case ${index} ${req.method} ${req.path.slice(0, 80)} [${req.label}] → ${status}: ${problem}`,
        );
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  tally.seconds = ((Date.now() - started) / 1000).toFixed(1);
  return tally;
}
