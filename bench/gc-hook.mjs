// Preloaded (`node --expose-gc --import bench/gc-hook.mjs bin/cursor-bridge.js serve …`) only into the serve process
// of the memory scenario's post-GC floor (bench/serve-process.ts): on SIGUSR2, three full collections 20 ms apart,
// then one line `bench-gc {"rss":…,"heapUsed":…,"external":…}` on stderr. It does nothing until signalled.
process.on("SIGUSR2", () => {
  let left = 3;
  const step = () => {
    globalThis.gc?.();
    if (--left > 0) {
      setTimeout(step, 20);
      return;
    }
    const { rss, heapUsed, external } = process.memoryUsage();
    process.stderr.write(`bench-gc ${JSON.stringify({ rss, heapUsed, external })}\n`);
  };
  step();
});
