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
  turns: TurnStats[];
}

/** Mutable statistics of one emulator. */
export interface StatsRecorder {
  snapshot(): EmulatorStats;
  reset(): void;
  countRun(method: "Run" | "RunSSE"): void;
  countAppend(): void;
  countWeb(kind: "search" | "fetch"): void;
  countAuth(route: "exchange" | "oauth-token"): void;
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

/** Creates an empty recorder. */
export function createStatsRecorder(): StatsRecorder {
  let stats: EmulatorStats = {
    runStreams: 0,
    runSseStreams: 0,
    bidiAppends: 0,
    webSearches: 0,
    webFetches: 0,
    exchangeCalls: 0,
    oauthTokenCalls: 0,
    turns: [],
  };
  return {
    snapshot: () => structuredClone(stats),
    reset() {
      stats = {
        runStreams: 0,
        runSseStreams: 0,
        bidiAppends: 0,
        webSearches: 0,
        webFetches: 0,
        exchangeCalls: 0,
        oauthTokenCalls: 0,
        turns: [],
      };
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
    },
  };
}
