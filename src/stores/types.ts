/**
 * The one set of store interfaces. Every layer that keeps state (the agent client's conversations and per-turn
 * blobs, the engine's conversation index, the Responses surface's stored responses, the login's credentials and the
 * lock that makes a refresh single-flight across instances) sees only these; the implementations sit beside this
 * module in `memory/`, `file/` and `redis/`, and the composition roots (cli/, server/) choose one. Type-only apart
 * from the shared defaults, so the lower layers import it without pulling in any implementation.
 *
 * What each interface promises is what test/stores/contract/ checks against every implementation.
 */
import type { JsonValue } from "../util/json-value.js";

/** Default time a conversation is kept after its last save: 7 days (another client, EPH, keeps the same; docs/protocol.md §5.3). */
export const DEFAULT_CONVERSATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** Default bound of the response stores. */
export const DEFAULT_MAX_STORED_RESPONSES = 1000;

// ---------------------------------------------------------------------------------------------------------------
// Conversations (the agent client): checkpoint + blobs per conversation, docs/protocol.md §5.3, §5.4.

/** What is stored for one conversation. */
export interface ConversationRecord {
  readonly conversationId: string;
  /** Serialized `ConversationStateStructure` of the latest `conversation_checkpoint_update`. */
  readonly checkpoint: Uint8Array;
  /** How many of the caller's messages (the turn input) the checkpoint covers. */
  readonly coveredMessages: number;
  /** History fingerprint of those messages (see backend/history-fingerprint.ts). */
  readonly fingerprint: string;
  /** Blobs by lowercase hex id. */
  readonly blobs: ReadonlyMap<string, Uint8Array>;
  /** Epoch milliseconds of the save. */
  readonly updatedAt: number;
}

/**
 * Storage of conversation records (file: the default; Redis: shared by instances; memory: tests and benchmarks).
 * Saving drops blobs the checkpoint no longer reaches; records expire `ttlMs` after `updatedAt`; beyond `maxEntries`
 * the oldest go first (at the latest by the next `deleteExpired`).
 */
export interface ConversationStore {
  /** The record, or undefined when unknown or expired. */
  load(conversationId: string): Promise<ConversationRecord | undefined>;
  /** Replaces the record; blobs not reachable from the checkpoint are not kept. */
  save(record: ConversationRecord): Promise<void>;
  delete(conversationId: string): Promise<void>;
  /** Removes expired records (and enforces the caps); resolves to how many this call removed. */
  deleteExpired(): Promise<number>;
}

/** Options shared by the conversation store implementations. */
export interface ConversationStoreOptions {
  /** @default 7 days */
  ttlMs?: number | undefined;
  /** Most conversations kept; the oldest beyond it are removed. @default 10_000 */
  maxEntries?: number | undefined;
  /** @default Date.now */
  now?: () => number;
}

// ---------------------------------------------------------------------------------------------------------------
// The conversation index (the engine): history key → conversation id, see engine/history.ts.

/** Options of the memory index. */
export interface ConversationIndexOptions {
  /** @default 10_000 */
  maxEntries?: number;
}

/** History key → conversation id. The file implementation is durable, the Redis one shared; memory serves tests. */
export interface ConversationIndex {
  /** Records the key (the last remember of a key wins); resolves once the entry is durable. */
  remember(key: string, conversationId: string): Promise<void>;
  /** The conversation of a key; async because a shared store (Redis) answers over the network. */
  lookup(key: string): Promise<string | undefined>;
  /** Entries held by this process (a shared store reports what it knows locally, or 0). */
  size(): number;
  /** Flushes pending writes and releases resources. */
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------------------------
// Stored responses (the Responses surface: `store: true`, `previous_response_id`, GET/DELETE /v1/responses/{id}).

/** One stored response. */
export interface StoredResponse {
  id: string;
  /** The response object as returned to the client. */
  response: { [key: string]: JsonValue };
  /** Every input item the response answered, earlier stored turns included. */
  input: JsonValue[];
  /** Epoch milliseconds of the save. */
  storedAt: number;
  /**
   * The virtual key (its id, never the key) whose request made it, when the team gateway authenticated that request:
   * only requests of that key read, continue or delete it. Absent: made without virtual keys, and only requests
   * without one see it.
   */
  owner?: string | undefined;
}

/** Storage of responses by id: records read back are copies; bounded (oldest first) and expiring with the TTL. */
export interface ResponseStore {
  /** The record, or undefined when unknown or expired. */
  get(id: string): Promise<StoredResponse | undefined>;
  put(record: StoredResponse): Promise<void>;
  /** Resolves to whether a record existed. */
  delete(id: string): Promise<boolean>;
  /** Removes expired records; resolves to how many were removed. */
  deleteExpired(): Promise<number>;
}

/** Options shared by the response store implementations. */
export interface ResponseStoreOptions {
  /** @default 7 days (the conversation TTL) */
  ttlMs?: number;
  /** Most records kept; the oldest are removed beyond it. @default 1000 */
  maxEntries?: number;
  /** @default Date.now */
  now?: () => number;
}

// ---------------------------------------------------------------------------------------------------------------
// Blobs of one turn (the agent client): the client-side KV store of docs/protocol.md §5.3.

/**
 * A content-addressed blob map used for the lifetime of one turn. Every operation is synchronous so `get_blob_args` /
 * `set_blob_args` are answered at once; only the memory implementation exists (a turn's blobs are persisted through
 * the {@link ConversationStore}).
 */
export interface BlobStore {
  /** The blob for a raw id, or undefined when unknown. */
  get(id: Uint8Array): Uint8Array | undefined;
  /**
   * Stores a blob under the id the server chose (server ids are stored verbatim, §5.3 / §9 item 6). The caller does
   * not change `data` afterwards; a view of a much larger buffer is copied.
   */
  set(id: Uint8Array, data: Uint8Array): void;
  /**
   * Stores a blob under its SHA-256 and returns the raw id. The store keeps `data` itself (no copy): callers hand over
   * bytes they just encoded and do not change them afterwards.
   */
  put(data: Uint8Array): Uint8Array;
  has(id: Uint8Array): boolean;
  /** Number of blobs held. */
  readonly size: number;
  /** A copy of the contents keyed by lowercase hex id. */
  snapshot(): Map<string, Uint8Array>;
}

// ---------------------------------------------------------------------------------------------------------------
// Credentials (auth/ and the composition roots): the single Cursor login, and the lock that makes refreshing it
// single-flight across processes sharing it.

/** Where a stored credential can come from. */
export const CREDENTIAL_SOURCES = ["login", "api-key", "import:cli", "import:ide", "env"] as const;

/** Where a stored credential came from. */
export type CredentialSource = (typeof CREDENTIAL_SOURCES)[number];

/** Credentials as stored (on-disk shape, version 1). `savedAt` is an ISO timestamp. */
export interface StoredCredentials {
  version: 1;
  accessToken: string;
  refreshToken: string;
  apiKey?: string | undefined;
  source: CredentialSource;
  email?: string | undefined;
  userId?: string | undefined;
  /**
   * The Cursor API URL the login was made against, when it is not Cursor's own (an emulator, a proxy): a start
   * without CURSOR_API_URL then uses it, and `doctor` names a different one.
   */
  apiUrl?: string | undefined;
  savedAt: string;
}

/** What callers hand to `save`; version and savedAt are filled in. */
export type CredentialsInput = Omit<StoredCredentials, "version" | "savedAt">;

/** Options of `save`. */
export interface SaveOptions {
  /** Replace a file that failed validation (the login command passes this after telling the user). */
  overwriteInvalid?: boolean;
}

/** Storage for the single credential record. */
export interface CredentialStore {
  /** Human-readable location (a path for the file store); safe to print. */
  readonly location: string;
  /** The stored credentials, or undefined if there are none. @throws ProxyError when the record is corrupt or foreign. */
  load(): Promise<StoredCredentials | undefined>;
  /**
   * Replaces the stored credentials. @throws ProxyError `invalid_request` for incomplete credentials, and (file)
   * when an invalid file exists and overwriteInvalid is not set.
   */
  save(credentials: CredentialsInput, options?: SaveOptions): Promise<StoredCredentials>;
  /** Removes the stored credentials; resolves to whether anything was removed. */
  clear(): Promise<boolean>;
}

/**
 * Runs `work` while holding a lock shared by everyone using the same store: one holder at a time, released when
 * `work` settles (also when it throws); resolves or rejects as `work` did.
 */
export type StoreLock = <T>(work: () => Promise<T>) => Promise<T>;

// ---------------------------------------------------------------------------------------------------------------
// Audit log (the team gateway, issue #29): who did what to keys, logins and the admin API, as JSON lines.

/** One audit record. Never holds key or token material. */
export interface AuditEntry {
  /** ISO time. */
  at: string;
  /** Who: `cli:<os user>`, `admin-api`, or the key name. */
  actor: string;
  /** What, e.g. `key.create`, `key.rotate`, `key.revoke`, `login`, `logout`, `admin.request`. */
  action: string;
  /** What it was done to (a key name or id, an account name, a path). */
  target?: string | undefined;
  /** Where from: a remote address, or `cli`. */
  from?: string | undefined;
  /** Anything else worth keeping (no secrets). */
  detail?: { [key: string]: JsonValue } | undefined;
}

/** Append-only audit log: a 0600 JSON-lines file, or a Redis stream for instances sharing a store. */
export interface AuditLog {
  append(entry: AuditEntry): Promise<void>;
  /** Entries oldest first; `limit` keeps the newest that many. */
  read(options?: { limit?: number | undefined }): Promise<AuditEntry[]>;
}

// ---------------------------------------------------------------------------------------------------------------
// Limits and spend of virtual keys (the team gateway, issue #29; src/gateway/limits/).

/** What one request asks of {@link LimitCounters.admit}: the key's limits (0 = none) and a unique slot id. */
export interface AdmitInput {
  keyId: string;
  /** A unique id for this request (its request entry and parallel slot). */
  slotId: string;
  /** Epoch ms. */
  now: number;
  /** The sliding window (ms) rpm and tpm count over. */
  windowMs: number;
  rpm: number;
  tpm: number;
  maxParallel: number;
  /** A parallel slot not released by then (an instance that died) frees itself. */
  leaseMs: number;
}

/** The key's window after {@link LimitCounters.admit}: what the decision and the rate-limit headers are made of. */
export interface WindowState {
  /** `rpm`, `tpm` or `parallel` when the request was refused (nothing was counted); undefined = admitted. */
  refused?: "rpm" | "tpm" | "parallel" | undefined;
  /** Requests counted in the window (this one included when admitted; only kept for a key with an rpm). */
  requestCount: number;
  /** Start (epoch ms) of the newest request counted in the window. */
  newestRequestAt?: number | undefined;
  /** On an rpm refusal: start of the request whose leaving the window admits the next one. */
  freeingRequestAt?: number | undefined;
  /** Tokens of the requests that finished in the window. */
  tokensUsed: number;
  /** End (epoch ms) of the newest finished request in the token window. */
  newestTokensAt?: number | undefined;
  /** On a tpm refusal: end of the finished request whose leaving brings the window under the tpm. */
  freeingTokensAt?: number | undefined;
  /** Requests in flight (this one included when admitted). */
  inFlight: number;
}

/**
 * Per-key rpm / tpm / max-parallel counters. `admit` decides and counts atomically (one Lua script on Redis), so
 * instances sharing a store enforce one limit together.
 */
export interface LimitCounters {
  /** Refuses (counting nothing) or counts the request and takes a parallel slot when `maxParallel` > 0. */
  admit(input: AdmitInput): Promise<WindowState>;
  /**
   * Releases the request's parallel slot and adds its tokens (input + output) to the tpm window. Idempotent: settling
   * the same slot again changes nothing (a settle retried after a store outage).
   */
  settle(keyId: string, slotId: string, tokens: number, now: number, windowMs: number): Promise<void>;
  /** Extends the leases of slots still held to `now + leaseMs` (a slot already freed stays free). */
  renew(keyId: string, slotIds: readonly string[], now: number, leaseMs: number): Promise<void>;
}

/** A key's totals for one budget period. Money in micro-dollars (integers, so sums are exact). */
export interface SpendTotals {
  microUsd: number;
  requests: number;
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
}

/** Durable spend per key and period (`day:2026-11-26`, `week:2026-11-23`, `month:2026-11`): file or Redis. */
export interface SpendStore {
  /** Adds one finished request; resolves to the totals before and after it (atomically: one crossing per period). */
  add(keyId: string, period: string, entry: SpendTotals): Promise<{ before: SpendTotals; after: SpendTotals }>;
  /** The totals of a key in a period (zeros when nothing was spent). */
  get(keyId: string, period: string): Promise<SpendTotals>;
  /**
   * Reserves a request's worst-case cost before it runs, in one atomic step with the budget check: refused (nothing
   * reserved) when the spend plus the reservations still held plus this one would pass `budgetMicroUsd`.
   */
  reserve(input: ReserveInput): Promise<ReserveResult>;
  /**
   * Settles a request: drops its reservation and adds what it really cost, atomically and once per `id` (a settle
   * retried after a store outage adds nothing the second time; `applied` is then false and before = after).
   */
  settle(input: SettleInput): Promise<{ before: SpendTotals; after: SpendTotals; applied: boolean }>;
  /** Extends the leases of reservations still held to `now + leaseMs` (a reservation that ran out stays out). */
  renew(keyId: string, period: string, ids: readonly string[], now: number, leaseMs: number): Promise<void>;
  /**
   * Shutdown: waits for the writes under way and writes once more what the store still holds only in memory (what
   * the disk refused earlier). Absent: every change is durable once its call resolves (Redis, memory).
   */
  close?(): Promise<void>;
  /**
   * The requests running now with what each has cost so far by estimate (the whole set each time: one not listed has
   * ended). A store that records it durably charges what it recorded once the request's process is gone (the file
   * store when a restart finds it; Redis once the note's lease ran out, by {@link chargeLapsed} or the key's next
   * reservation), so a crash does not lose the cost of the turns running then; a settle replaces a request's record
   * by its real cost. Absent: running requests are not recorded (the memory store: nothing of it outlives the process).
   */
  noteRunning?(running: readonly RunningCost[]): void;
  /**
   * Shutdown of a store shared with other instances: these requests end with this process unsettled; they are
   * charged now, once per id (a settle that still comes replaces the estimate, as after a lapse). Absent: the
   * store records them at its {@link close} (the file store: its next start charges them).
   */
  chargeStopped?(running: readonly RunningCost[]): Promise<void>;
  /**
   * Charges the noted costs of every key whose lease ran out (requests of an instance that died), once per id;
   * resolves to how many it charged. Each instance calls it periodically, so a key's spend does not wait for its
   * next request. Absent: the store charges them itself (the file store, at its next start).
   */
  chargeLapsed?(): Promise<number>;
}

/** A running request's cost so far by estimate ({@link SpendStore.noteRunning}). */
export interface RunningCost {
  keyId: string;
  period: string;
  /** Its reservation id. */
  id: string;
  entry: SpendTotals;
}

/** What {@link SpendStore.reserve} is asked. */
export interface ReserveInput {
  keyId: string;
  period: string;
  /** The request's unique id (what settles or renews it). */
  id: string;
  /** Its worst-case cost, micro-dollars. */
  microUsd: number;
  /** The key's budget in this period, micro-dollars; undefined = no budget (always reserved). */
  budgetMicroUsd: number | undefined;
  /** Epoch ms. */
  now: number;
  /** A reservation not renewed by then (its instance died) is dropped. */
  leaseMs: number;
}

/** The answer of {@link SpendStore.reserve}. */
export interface ReserveResult {
  admitted: boolean;
  /** What the key spent in the period (settled requests only). */
  spent: SpendTotals;
  /** Reservations held (this one included when admitted), micro-dollars. */
  reservedMicroUsd: number;
}

/** What {@link SpendStore.settle} is asked. */
export interface SettleInput {
  keyId: string;
  period: string;
  /** The id the request reserved under (settling an id never reserved just adds the entry, once). */
  id: string;
  /** What the request really used. */
  entry: SpendTotals;
}

/**
 * A request whose settle failed (the store was unreachable): what it owes the limits and the spend, kept to be
 * settled again once the store is back.
 */
export interface PendingSettle {
  keyId: string;
  /** The slot and reservation id of the request. */
  id: string;
  period: string;
  entry: SpendTotals;
  /** Tokens (input + output) for the tpm window, and when the request ended (epoch ms). */
  tokens: number;
  finishedAt: number;
  /** True once the counters part (slot, tokens) was done; only the spend is left. */
  countersDone: boolean;
}

/** Settles that failed, kept on the instance's disk (or in memory for tests) until they succeed. */
export interface SettleQueue {
  push(item: PendingSettle): Promise<void>;
  /** Oldest first. */
  list(): Promise<PendingSettle[]>;
  /** Removes the items with these ids. */
  remove(ids: readonly string[]): Promise<void>;
}

// ---------------------------------------------------------------------------------------------------------------
// Virtual keys (the team gateway, issue #29): one record per key a team member holds. The key itself is shown once
// when it is made and never stored: a record keeps its SHA-256 and a short prefix to recognise it by.

/** The limits a key record carries (the same fields as the gateway's `KeyLimits`); absent = unlimited. */
export interface StoredKeyLimits {
  rpm?: number | undefined;
  tpm?: number | undefined;
  maxParallel?: number | undefined;
  budget?: { usd: number; period: "day" | "week" | "month" } | undefined;
}

/** One virtual key as stored. Times are ISO strings. */
export interface VirtualKeyRecord {
  /** Stable id (`vk_…`), never the key. */
  id: string;
  /** Human name, unique among the keys not revoked. */
  name: string;
  /** Hex SHA-256 of the key. */
  hash: string;
  /** The key's first characters (`cbk-` and 6 more), for recognising it in lists; not enough to use it. */
  prefix: string;
  createdAt: string;
  /** Set by a rotation: when the current key replaced the previous one. */
  rotatedAt?: string | undefined;
  /** Set by `keys update`: when its settings last changed. */
  updatedAt?: string | undefined;
  expiresAt?: string | undefined;
  revokedAt?: string | undefined;
  /** Model globs (`gpt-5*`, `claude-4.5-sonnet`) the key may use; absent = every model. */
  models?: string[] | undefined;
  /** Named Cursor account its turns run on; absent = the default account. */
  account?: string | undefined;
  limits: StoredKeyLimits;
}

/**
 * What {@link KeyStore.update} may change: a rotation (hash, prefix, rotatedAt), a revocation, or the key's settings
 * (`keys update`): new limits replace the old ones whole; `null` clears models, account or expiry.
 */
export type KeyRecordChanges = Partial<Pick<VirtualKeyRecord, "hash" | "prefix" | "rotatedAt" | "revokedAt">> & {
  limits?: StoredKeyLimits | undefined;
  models?: string[] | null | undefined;
  account?: string | null | undefined;
  expiresAt?: string | null | undefined;
  /** When the settings last changed (ISO). */
  updatedAt?: string | undefined;
};

/**
 * The virtual keys: a 0600 file in the data directory (one instance) or Redis (instances sharing a store). Writers are
 * the `keys` commands and the admin API; a running server reads `list()` again whenever `version()` changes.
 */
export interface KeyStore {
  /** Where the keys are (a path, or the Redis URL without credentials); safe to print. */
  readonly location: string;
  /** Every record, revoked ones included, oldest first. */
  list(): Promise<VirtualKeyRecord[]>;
  /** Adds a record. @throws ProxyError `invalid_request`/`already_exists` when a key not revoked has its name or id. */
  create(record: VirtualKeyRecord): Promise<void>;
  /** Changes one record and returns it. @throws ProxyError `not_found` for an unknown id. */
  update(id: string, changes: KeyRecordChanges): Promise<VirtualKeyRecord>;
  /** A token that changes whenever a record does (cheap: a file's stat, a Redis counter). */
  version(): Promise<string>;
}

// ---------------------------------------------------------------------------------------------------------------
// Named Cursor accounts (the team gateway, issue #29): several logins side by side, one of them the default.

/**
 * The account whose credentials are the single record every cursor-bridge kept before accounts had names (the file
 * `<configDir>/credentials.json`, the Redis key `credentials`): users who never name an account use it, unchanged.
 */
export const DEFAULT_ACCOUNT = "default";

/** One stored account, as listed (no token material). */
export interface AccountEntry {
  name: string;
  email?: string | undefined;
  userId?: string | undefined;
  source: CredentialSource;
  savedAt: string;
}

/**
 * The credential records of every named account. `credentials(name)` is an ordinary {@link CredentialStore} for
 * one account (the refreshing token source and the login flows use it as they always did); the account
 * {@link DEFAULT_ACCOUNT} is the record that predates names. Which account serves requests that name none is kept
 * apart from the records (`defaultAccount`), and starts as {@link DEFAULT_ACCOUNT}.
 */
export interface AccountStore {
  /** Human-readable location of the records; safe to print. */
  readonly location: string;
  /** The store of one account. @throws ProxyError `invalid_request` for a name that is not an account name. */
  credentials(account: string): CredentialStore;
  /** The accounts with stored credentials, sorted by name. @throws ProxyError when a record is corrupt or foreign. */
  list(): Promise<AccountEntry[]>;
  /** The account requests without one run on (whether or not it has credentials). */
  defaultAccount(): Promise<string>;
  /** Makes `account` the default (the caller checks that it exists). */
  setDefaultAccount(account: string): Promise<void>;
}
