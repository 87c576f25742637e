/**
 * A /health probe in its own process, as a monitoring system would poll: the latencies it reports are the server's
 * alone, not the test process's own client work sharing the event loop with the server under test.
 */
import { type ChildProcess, spawn } from "node:child_process";

const SCRIPT = `
const { Agent, get } = require("node:http");
const agent = new Agent({ keepAlive: true, maxSockets: 1 });
const url = process.argv[1];
let polling = false;
const latencies = [];
const once = () => new Promise((resolve, reject) => {
  const started = performance.now();
  get(url, { agent }, (res) => { res.resume(); res.on("end", () => resolve(performance.now() - started)); }).on("error", reject);
});
async function loop() {
  while (polling) { latencies.push(await once()); await new Promise((r) => setTimeout(r, 5)); }
  process.stdout.write(JSON.stringify(latencies) + "\\n");
  latencies.length = 0;
}
process.stdin.setEncoding("utf8");
process.stdin.on("data", async (line) => {
  if (line.startsWith("warm")) { for (let i = 0; i < 30; i++) await once(); process.stdout.write("[]\\n"); }
  else if (line.startsWith("start")) { polling = true; loop(); process.stdout.write("started\\n"); }
  else if (line.startsWith("stop")) polling = false;
});
process.stdin.on("end", () => process.exit(0));
`;

export interface HealthProbe {
  /** Polls until {@link stop}, which resolves to every latency measured (ms). */
  start(): Promise<void>;
  stop(): Promise<number[]>;
  close(): void;
}

export async function startHealthProbe(url: string): Promise<HealthProbe> {
  const child: ChildProcess = spawn(process.execPath, ["-e", SCRIPT, `${url}/health`], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  let buffered = "";
  const waiting: Array<(line: string) => void> = [];
  child.stdout?.setEncoding("utf8");
  child.stdout?.on("data", (chunk: string) => {
    buffered += chunk;
    for (let at = buffered.indexOf("\n"); at >= 0; at = buffered.indexOf("\n")) {
      const line = buffered.slice(0, at);
      buffered = buffered.slice(at + 1);
      waiting.shift()?.(line);
    }
  });
  const send = (command: string) =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`health probe: no answer to ${command}`)), 30_000);
      waiting.push((line) => {
        clearTimeout(timer);
        resolve(line);
      });
      child.stdin?.write(`${command}\n`);
    });
  await send("warm");
  return {
    start: async () => {
      await send("start");
    },
    stop: async () => JSON.parse(await send("stop")) as number[],
    close: () => {
      child.stdin?.end();
      child.kill();
    },
  };
}
