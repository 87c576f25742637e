/**
 * The two-instance scenario (issue 18): the same tool-calling workload through HAProxy in front of one instance,
 * then in front of two instances sharing one Redis store, against one standalone emulator. Every conversation is a
 * user turn that calls a client tool and the tool result answered by that same turn, so about half of the results
 * are forwarded between instances. Reports both throughputs, their ratio and the load average: on a 2-core machine
 * the emulator, HAProxy, Redis and the clients share the cores with the instances, so the ratio shows that it scales
 * and stays correct, not what more cores would give.
 */
import { cpus, loadavg } from "node:os";
import { type Proc, startBalancer, startInstance, startStandaloneEmulator } from "../test/cluster/support/processes.js";
import { hasBinary, type RedisServer, startRedisServer } from "../test/cluster/support/redis-server.js";
import { fmt, type Table } from "./report.js";

/** Result of one balancer configuration. */
export interface ClusterRun {
  instances: number;
  conversations: number;
  seconds: number;
  conversationsPerSecond: number;
  /** Runs the emulator counted ÷ conversations: 1 when every result reached the turn that asked for it. */
  runsPerConversation: number;
  loadAverage: number[];
}

/** The scenario's result (or why it was skipped). */
export type ClusterResult = { skipped: string } | { one: ClusterRun; two: ClusterRun; ratio: number };

const TOOL = {
  type: "function",
  function: { name: "lookup", parameters: { type: "object", properties: { key: { type: "string" } } } },
};

async function chat(base: string, messages: unknown[]): Promise<{ message: Record<string, unknown>; finish: string }> {
  const response = await fetch(`${base}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "auto", messages, tools: [TOOL] }),
  });
  if (!response.ok) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
  const body = (await response.json()) as {
    choices: Array<{ message: Record<string, unknown>; finish_reason: string }>;
  };
  const choice = body.choices[0];
  if (choice === undefined) throw new Error("no choice");
  return { message: choice.message, finish: choice.finish_reason };
}

/** One conversation: a tool call and its result, checked for the right answer. */
async function conversation(base: string, n: number): Promise<void> {
  const messages: unknown[] = [{ role: "user", content: `Bench ${n} [[emu:tool lookup {"key":"k${n}"}]]` }];
  const first = await chat(base, messages);
  const calls = first.message.tool_calls as Array<{ id: string }> | undefined;
  const id = calls?.[0]?.id;
  if (first.finish !== "tool_calls" || id === undefined) throw new Error(`conversation ${n} did not call the tool`);
  messages.push(first.message, { role: "tool", tool_call_id: id, content: `value-${n}` });
  const second = await chat(base, messages);
  if (!String(second.message.content).includes(`lookup returned: value-${n}`)) {
    throw new Error(`conversation ${n} got a wrong answer: ${String(second.message.content)}`);
  }
}

async function runsOf(emulatorUrl: string): Promise<number> {
  return ((await (await fetch(`${emulatorUrl}/emulator/stats`)).json()) as { runs: number }).runs;
}

async function measure(
  balancerUrl: string,
  emulatorUrl: string,
  instances: number,
  conversations: number,
  concurrency: number,
): Promise<ClusterRun> {
  // Warm-up (JIT, connections, model list caches) is not measured.
  await Promise.all(Array.from({ length: concurrency }, (_, i) => conversation(balancerUrl, -1 - i)));
  const runsBefore = await runsOf(emulatorUrl);
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < conversations) {
        next += 1;
        await conversation(balancerUrl, next);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const runs = (await runsOf(emulatorUrl)) - runsBefore;
  return {
    instances,
    conversations,
    seconds,
    conversationsPerSecond: conversations / seconds,
    runsPerConversation: runs / conversations,
    loadAverage: loadavg(),
  };
}

/** Runs the scenario; skipped (with the reason) when redis-server or haproxy is missing. */
export async function runCluster(conversations: number, concurrency: number): Promise<ClusterResult> {
  const missing = ["redis-server", "redis-cli", "haproxy"].filter((name) => !hasBinary(name));
  if (missing.length > 0) return { skipped: `${missing.join(", ")} not installed` };
  const apiKey = "bench-cluster-key";
  const secret = "bench-cluster-secret-0123456789";
  let redis: RedisServer | undefined;
  const procs: Proc[] = [];
  try {
    redis = await startRedisServer();
    const emulator = await startStandaloneEmulator(apiKey);
    procs.push(emulator);
    const options = { emulatorUrl: emulator.url, apiKey, store: redis.url, secret, logLevel: "warn" };
    const instances = await Promise.all([startInstance(options), startInstance(options)]);
    procs.push(...instances);
    const single = await startBalancer([instances[0]?.port ?? 0]);
    procs.push(single);
    const one = await measure(single.url, emulator.url, 1, conversations, concurrency);
    await single.stop();
    const double = await startBalancer(instances.map((instance) => instance.port));
    procs.push(double);
    const two = await measure(double.url, emulator.url, 2, conversations, concurrency);
    return { one, two, ratio: two.conversationsPerSecond / one.conversationsPerSecond };
  } finally {
    for (const proc of procs.reverse()) await proc.stop();
    await redis?.close();
  }
}

/** The scenario's table. */
export function clusterReport(result: ClusterResult): Table {
  const title = "Two instances on one Redis behind HAProxy (tool call + result per conversation)";
  if ("skipped" in result)
    return { title, header: ["scenario", "result"], rows: [["cluster", "skipped"]], notes: [result.skipped] };
  const row = (run: ClusterRun): [string, ...string[]] => [
    `${run.instances} instance${run.instances === 1 ? "" : "s"}`,
    fmt(run.conversationsPerSecond, 1),
    fmt(run.runsPerConversation, 2),
    run.loadAverage.map((l) => l.toFixed(2)).join(" "),
  ];
  return {
    title,
    header: ["balancer in front of", "conversations/s", "Runs/conversation", "load avg after (1/5/15)"],
    rows: [row(result.one), row(result.two)],
    notes: [
      `two ÷ one instance: ${fmt(result.ratio, 2)}× on ${cpus().length} CPUs shared with the emulator, HAProxy, Redis and the clients`,
      "Runs/conversation 1.00 = every tool result was answered by the turn that asked for it (forwarded when it landed on the other instance)",
    ],
  };
}
