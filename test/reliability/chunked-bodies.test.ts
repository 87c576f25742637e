/**
 * The large-body gate counts a body's bytes as they arrive, so chunked bodies (no content-length) are held to the
 * same memory budget as declared ones: 60 concurrent 3.9 MB chat requests against `cursor-bridge serve` (its own
 * process, the embedded emulator), sent three times with content-length and three times chunked, interleaved, each
 * time to a fresh server. The median chunked peak RSS stays within 20 % of the median declared one (it was 891 MB
 * against 359 MB when only content-length was counted). Each request's 3.9 MB is a conversation of user messages of
 * at most 0.9 MB: Cursor (and the emulator) refuses a single user message above 1 MiB.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { largeConversation, startServer, treeRss } from "../../bench/memory-budget.js";

const REQUESTS = 60;
const MESSAGE_BYTES = 3.9e6;
const MB = 1024 * 1024;

/** POSTs `body` with a content-length, or chunked in 64 KiB writes. */
function post(url: string, body: string, chunked: boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const bytes = Buffer.from(body);
    const req = request(
      url,
      {
        method: "POST",
        agent: false,
        headers: {
          "content-type": "application/json",
          ...(chunked ? { "transfer-encoding": "chunked" } : { "content-length": bytes.length }),
        },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    if (!chunked) return req.end(bytes);
    let at = 0;
    const pump = () => {
      while (at < bytes.length) {
        const chunk = bytes.subarray(at, at + 64 * 1024);
        at += chunk.length;
        if (!req.write(chunk)) return void req.once("drain", pump);
      }
      req.end();
    };
    pump();
  });
}

/** Peak RSS (MB) of a fresh server while it answers the 60 requests, and their statuses. */
async function peakOf(chunked: boolean): Promise<{ peakMb: number; statuses: number[] }> {
  const dir = await mkdtemp(join(tmpdir(), "cursor-bridge-chunked-"));
  dirs.push(dir);
  const server = await startServer(dir);
  try {
    const url = `${server.url}/v1/chat/completions`;
    await post(url, JSON.stringify({ model: "auto", messages: [{ role: "user", content: "warm up" }] }), chunked);
    let peak = await treeRss(server.pid);
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, await treeRss(server.pid));
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const statuses = await Promise.all(
      Array.from({ length: REQUESTS }, (_, i) => {
        const line = `[[emu:tokens 3]] Request ${i}: the quick brown fox jumps over the lazy dog.\n`;
        const messages = largeConversation(line, MESSAGE_BYTES);
        return post(url, JSON.stringify({ model: "auto", messages }), chunked).catch(() => 0);
      }),
    );
    sampling = false;
    await sampler;
    return { peakMb: Math.max(peak, await treeRss(server.pid)) / MB, statuses };
  } finally {
    await server.stop();
  }
}

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe("chunked bodies and the memory budget", () => {
  it(`${REQUESTS} × 3.9 MB chunked bodies peak within 20 % of the same bodies with content-length`, async () => {
    // One server's peak RSS varies by more than 10 % from run to run, whatever the framing (521–639 MB seen for the
    // same declared run: the peak is the highest of the garbage collector's sawtooth, sampled every 50 ms, on a
    // machine running other tests), so each framing runs three times, interleaved, and their medians are compared.
    // The bypass this guards against was a factor of 2.5, far outside that noise. The bound is 20 %: medians of three
    // still differed by 7–18 % between two runs of the same code on a loaded machine (507/542 and 483/573 MB).
    const runs: Array<{ chunked: boolean; peakMb: number; statuses: number[] }> = [];
    for (const chunked of [false, true, false, true, false, true]) runs.push({ chunked, ...(await peakOf(chunked)) });
    const medianWith = (chunked: boolean) => {
      const peaks = runs.filter((run) => run.chunked === chunked).map((run) => run.peakMb);
      return peaks.sort((a, b) => a - b)[Math.floor(peaks.length / 2)] as number;
    };
    const declared = medianWith(false);
    const chunked = medianWith(true);
    process.stdout.write(
      `reliability: ${REQUESTS} × 3.9 MB bodies: peak RSS ${declared.toFixed(0)} MB with content-length, ${chunked.toFixed(0)} MB chunked (the median of three runs each: ${runs.map((run) => `${run.chunked ? "chunked" : "declared"} ${run.peakMb.toFixed(0)}`).join(", ")})\n`,
    );
    for (const run of runs) expect(run.statuses.every((status) => status === 200)).toBe(true);
    expect(chunked).toBeLessThanOrEqual(declared * 1.2);
  }, 600_000);
});
