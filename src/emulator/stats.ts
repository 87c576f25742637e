/** Counters the in-process API exposes (`Emulator.stats()`), mainly to prove flat upload across turns. */

/** One Run/RunSSE turn as the emulator saw it. */
export interface TurnStats {
  /** The Run's id: its `x-request-id` (RunSSE: the bidi request id), else one the emulator made up. */
  runId: string;
  /**
   * The client's identity and SDK headers as sent (cursor-protocol-addendum-3.md X2: `x-blob-encryption-key`,
   * `x-original-request-id`, the subagent lineage), lower-case names; absent ones are left out.
   */
  headers: Record<string, string>;
  conversationId: string;
  transport: "http2" | "http1";
  action: string;
  model: string;
  /** Every client→server protobuf byte of the turn (run request, blob results, exec results, acks, heartbeats). */
  requestBytes: number;
  getBlobRequests: number;
  startedAt: number;
  endedAt?: number;
  outcome?: string;
}

/** Snapshot returned by `Emulator.stats()`. */
export interface EmulatorStats {
  runStreams: number;
  runSseStreams: number;
  bidiAppends: number;
  /** Web searches the client approved and the emulator "ran" (`[[emu:web-search]]`). */
  webSearches: number;
  /** Web fetches the client approved (`[[emu:web-fetch]]`). */
  webFetches: number;
  /** `POST /auth/exchange_user_api_key` calls (answered or refused). */
  exchangeCalls: number;
  /** `POST /oauth/token` calls (answered or refused). */
  oauthTokenCalls: number;
  /** `GetUsableModels` calls (AgentService's or AiService's). */
  usableModelsCalls: number;
  /** `AiService/AvailableModels` calls. */
  availableModelsCalls: number;
  turns: TurnStats[];
}

/**
 * Turns the statistics keep, the newest (up to a tenth more before the oldest are dropped in one go): a long-running
 * emulator (`serve --upstream emulator`, `cursor-bridge emulator`) kept every turn's record, about 400 bytes of heap
 * each, for as long as it ran (20 MB after the bench's soak of 50,000 turns).
 */
export const MAX_TURNS = 10_000;

/** Completed turns since the start (or the last reset), by usage bucket: Auto's (`default`/`auto`) and the others. */
export interface CompletedTurns {
  auto: number;
  other: number;
}

/** Mutable statistics of one emulator. */
export interface StatsRecorder {
  /** Counted as turns complete, so the usage stays right after old turns' records are dropped. */
  completed(): CompletedTurns;
  snapshot(): EmulatorStats;
  reset(): void;
  countRun(method: "Run" | "RunSSE"): void;
  countAppend(): void;
  countWeb(kind: "search" | "fetch"): void;
  countAuth(route: "exchange" | "oauth-token"): void;
  countModelList(rpc: "usable" | "available"): void;
  /** Registers a turn; the returned record is updated in place as the turn runs. */
  openTurn(
    transport: "http2" | "http1",
    now: number,
    run?: { runId: string; headers: Record<string, string> },
  ): TurnStats;
  /** The turn of a run id (the newest, should a client reuse one). */
  findRun(runId: string): TurnStats | undefined;
  /** Sets the outcome once (the first reason wins) and the end time. */
  closeTurn(turn: TurnStats, outcome: string, now: number): void;
}

/** The statistics of a recorder that has counted nothing yet. */
function emptyStats(): EmulatorStats {
  return {
    runStreams: 0,
    runSseStreams: 0,
    bidiAppends: 0,
    webSearches: 0,
    webFetches: 0,
    exchangeCalls: 0,
    oauthTokenCalls: 0,
    usableModelsCalls: 0,
    availableModelsCalls: 0,
    turns: [],
  };
}

/** Creates an empty recorder. */
export function createStatsRecorder(maxTurns = MAX_TURNS): StatsRecorder {
  let completed: CompletedTurns = { auto: 0, other: 0 };
  let stats = emptyStats();
  return {
    snapshot: () => structuredClone(stats),
    completed: () => ({ ...completed }),
    reset() {
      completed = { auto: 0, other: 0 };
      stats = emptyStats();
    },
    countRun(method) {
      if (method === "Run") stats.runStreams++;
      else stats.runSseStreams++;
    },
    countAppend() {
      stats.bidiAppends++;
    },
    countAuth(route) {
      if (route === "exchange") stats.exchangeCalls++;
      else stats.oauthTokenCalls++;
    },
    countModelList(rpc) {
      if (rpc === "usable") stats.usableModelsCalls++;
      else stats.availableModelsCalls++;
    },
    countWeb(kind) {
      if (kind === "search") stats.webSearches++;
      else stats.webFetches++;
    },
    openTurn(transport, now, run = { runId: "", headers: {} }) {
      const turn: TurnStats = {
        runId: run.runId,
        headers: run.headers,
        conversationId: "",
        transport,
        action: "",
        model: "",
        requestBytes: 0,
        getBlobRequests: 0,
        startedAt: now,
      };
      stats.turns.push(turn);
      if (stats.turns.length > maxTurns + Math.ceil(maxTurns / 10))
        stats.turns.splice(0, stats.turns.length - maxTurns);
      return turn;
    },
    findRun(runId) {
      const turn = stats.turns.findLast((t) => t.runId === runId);
      return turn === undefined ? undefined : structuredClone(turn);
    },
    closeTurn(turn, outcome, now) {
      if (turn.outcome !== undefined) return;
      turn.outcome = outcome;
      turn.endedAt = now;
      if (outcome !== "completed") return;
      if (turn.model === "default" || turn.model === "auto") completed.auto += 1;
      else completed.other += 1;
    },
  };
}
