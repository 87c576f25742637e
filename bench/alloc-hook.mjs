// Preloaded (`BENCH_SERVE_NODE_ARGS="--import bench/alloc-hook.mjs"`) into serve by bench/alloc-profile.ts: the first
// SIGUSR2 starts V8's sampling heap profiler (every allocation, also the ones collected since, sampled every 512 bytes
// on average); the second stops it, writes the profile to BENCH_ALLOC_PROFILE and prints `bench-alloc done` on stderr.
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector";

const session = new Session();
session.connect();
let sampling = false;
process.on("SIGUSR2", () => {
  if (!sampling) {
    sampling = true;
    session.post("HeapProfiler.startSampling", {
      samplingInterval: 512,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    process.stderr.write("bench-alloc started\n");
    return;
  }
  sampling = false;
  session.post("HeapProfiler.stopSampling", (error, result) => {
    if (error === null)
      writeFileSync(process.env.BENCH_ALLOC_PROFILE ?? "serve.heapprofile", JSON.stringify(result.profile));
    process.stderr.write(`bench-alloc done ${error === null ? "" : String(error)}\n`);
  });
});
