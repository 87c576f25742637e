/** Parent side of bench/bridge-process.ts: cursor-bridge in a child process, its CPU and memory read over IPC. */
import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { BridgeChildOptions, BridgeReady } from "./bridge-process.js";
import { forkChild } from "./child-ipc.js";

/** cursor-bridge in a child process. */
export interface RemoteBridge {
  /** `http://127.0.0.1:PORT/v1` */
  readonly baseURL: string;
  readonly pid: number;
  /** The bridge process's process.cpuUsage(). */
  cpuUsage(): Promise<NodeJS.CpuUsage>;
  /** The bridge process's process.memoryUsage() (rss, heapUsed, external…). */
  memoryUsage(): Promise<NodeJS.MemoryUsage>;
  /** Three full GCs in the bridge process, then its memoryUsage(). */
  collectGarbage(): Promise<NodeJS.MemoryUsage>;
  /** Parked turns right now; closeAll closes them. */
  parked: { size(): Promise<number>; closeAll(): Promise<void> };
  close(): Promise<void>;
}

/** Starts the bridge child against `emulatorUrl` and waits until it listens. */
export async function startRemoteBridge(emulatorUrl: string, accessToken: string): Promise<RemoteBridge> {
  const entry = fileURLToPath(new URL("./bridge-process.ts", import.meta.url));
  const options: BridgeChildOptions = { emulatorUrl, accessToken };
  const execArgv = ["--expose-gc"];
  const profileDir = process.env.BENCH_BRIDGE_CPU_PROF;
  if (profileDir !== undefined && profileDir !== "") {
    mkdirSync(profileDir, { recursive: true });
    execArgv.push("--cpu-prof", `--cpu-prof-dir=${profileDir}`);
  }
  const child = await forkChild<BridgeReady>(entry, { BENCH_BRIDGE_OPTIONS: JSON.stringify(options) }, execArgv);
  return {
    baseURL: child.ready.baseURL,
    pid: child.ready.pid,
    cpuUsage: () => child.ask<NodeJS.CpuUsage>("cpu"),
    memoryUsage: () => child.ask<NodeJS.MemoryUsage>("memory"),
    collectGarbage: () => child.ask<NodeJS.MemoryUsage>("gc"),
    parked: {
      size: () => child.ask<number>("parkedSize"),
      closeAll: () => child.ask<void>("parkedCloseAll"),
    },
    close: () => child.close(),
  };
}
