// Preloaded only into the serves of the memory scenario (bench/serve-process.ts, `gcHook`). It does nothing until
// signalled. On SIGUSR2 it reads V8's young generation (new space, committed bytes) as it stands, then, only when the
// process was started with `--expose-gc` (the post-GC floor: `node --expose-gc --import bench/gc-hook.mjs …`), runs
// three full collections 20 ms apart, and prints one line `bench-gc {"rss":…,"heapUsed":…,"external":…,"newSpace":…}`
// on stderr. Without `--expose-gc` (the raw serve: `node --import bench/gc-hook.mjs …`) it collects nothing: it only
// answers the young generation's size, which no reading from /proc gives.
import { getHeapSpaceStatistics } from "node:v8";

const youngGeneration = () => getHeapSpaceStatistics().find((space) => space.space_name === "new_space")?.space_size;

process.on("SIGUSR2", () => {
  const newSpace = youngGeneration();
  const report = () => {
    const { rss, heapUsed, external } = process.memoryUsage();
    process.stderr.write(`bench-gc ${JSON.stringify({ rss, heapUsed, external, newSpace })}\n`);
  };
  const gc = globalThis.gc;
  if (gc === undefined) {
    report();
    return;
  }
  let left = 3;
  const step = () => {
    gc();
    if (--left > 0) {
      setTimeout(step, 20);
      return;
    }
    report();
  };
  step();
});
