// Preloaded (`node --expose-gc --import bench/gc-hook.mjs bin/cursor-bridge.js serve …`) only into the serve process
// of the memory scenario's post-GC floor (bench/serve-process.ts): on SIGUSR2, the young generation's committed size
// as it stands (V8's new space, before any forced collection: what the raw serve, with the same workload, holds), then
// three full collections 20 ms apart, then one line `bench-gc {"rss":…,"heapUsed":…,"external":…,"newSpace":…}` on
// stderr. It does nothing until signalled.
import { getHeapSpaceStatistics } from "node:v8";

const youngGeneration = () => getHeapSpaceStatistics().find((space) => space.space_name === "new_space")?.space_size;

process.on("SIGUSR2", () => {
  const newSpace = youngGeneration();
  let left = 3;
  const step = () => {
    globalThis.gc?.();
    if (--left > 0) {
      setTimeout(step, 20);
      return;
    }
    const { rss, heapUsed, external } = process.memoryUsage();
    process.stderr.write(`bench-gc ${JSON.stringify({ rss, heapUsed, external, newSpace })}\n`);
  };
  step();
});
