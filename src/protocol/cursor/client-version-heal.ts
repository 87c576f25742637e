/**
 * A client version that heals itself (cursor-protocol-addendum-3.md E1, E9, E13). Cursor refuses an outdated client
 * with "Update Required", which no retry cures. When the version in use is the built-in default or one learned
 * earlier (a configured version, CURSOR_CLIENT_VERSION and the installed cursor-agent's version always win), the
 * bridge learns the current build from Cursor's install script and uses it from then on: when `GetServerConfig`'s
 * `client_version_status` says the version is below the minimum supported (checked 10 s after a server starts and
 * once a day), and when a turn is refused as outdated (that turn is then retried once). Each change is logged and
 * kept in the data dir, so the next start begins with it.
 */
import type { Logger } from "../../util/logger.js";
import { silentLogger } from "../../util/logger.js";
import {
  buildFromInstallScript,
  type ClientVersionSource,
  compareClientVersions,
  type ResolvedClientVersion,
} from "./client-version.js";

/** Where Cursor's install script is read (`CURSOR_BRIDGE_INSTALL_URL`). */
export const DEFAULT_INSTALL_URL = "https://cursor.com/install";

/** What `GetServerConfig` says about client versions (E13); empty strings when Cursor sent none. */
export interface ServerVersionPolicy {
  minSupported: string;
  minAllowed: string;
  current: string;
  updateRequired: boolean;
}

/** Options of {@link ClientVersionHealer}. */
export interface ClientVersionHealerOptions {
  initial: ResolvedClientVersion;
  /** @default DEFAULT_INSTALL_URL */
  installUrl?: string;
  /** @default globalThis.fetch */
  fetch?: typeof fetch;
  /** Keeps a learned version for the next start (the data dir); failures are logged, not thrown. */
  persist?: (version: string) => Promise<void>;
  logger?: Logger;
  /** Deadline of the install-script request. @default 15000 */
  timeoutMs?: number;
}

/** The client version in use, and how it heals. */
export class ClientVersionHealer implements ResolvedClientVersion {
  version: string;
  source: ClientVersionSource;
  /** The server's policy as last read (`doctor`, `status`); undefined before any check. */
  policy: ServerVersionPolicy | undefined;
  private healing: Promise<boolean> | undefined;
  private logger: Logger;

  constructor(private readonly options: ClientVersionHealerOptions) {
    this.version = options.initial.version;
    this.source = options.initial.source;
    this.logger = options.logger ?? silentLogger;
  }

  /** Where the changes are logged from now on (the server's logger, once it has one). */
  useLogger(logger: Logger): void {
    this.logger = logger;
  }

  /** Whether the bridge may change the version (never one the user or the installed CLI chose). */
  get healable(): boolean {
    return this.source === "default" || this.source === "learned";
  }

  /**
   * Reads the server's policy; learns a newer build when the version in use is below the minimum supported one (or
   * Cursor says an update is required). Never throws: a failed check changes nothing.
   */
  async check(read: () => Promise<ServerVersionPolicy | undefined>): Promise<void> {
    try {
      const policy = await read();
      if (policy === undefined) return;
      this.policy = policy;
      const below = policy.minSupported !== "" && compareClientVersions(this.version, policy.minSupported) < 0;
      if (below || policy.updateRequired) {
        this.logger.warn("Cursor's minimum supported client version is above the one in use", {
          clientVersion: this.version,
          minSupported: policy.minSupported,
        });
        await this.heal("below the server's minimum");
      }
    } catch (error) {
      this.logger.debug("could not read Cursor's client version policy", { error });
    }
  }

  /**
   * Learns the current build from the install script and uses it when it is newer than the version in use; true
   * when the version changed (then a refused turn may be retried once). Concurrent callers share one attempt.
   */
  heal(reason: string): Promise<boolean> {
    if (!this.healable) return Promise.resolve(false);
    this.healing ??= this.learn(reason).finally(() => {
      this.healing = undefined;
    });
    return this.healing;
  }

  private async learn(reason: string): Promise<boolean> {
    const url = this.options.installUrl ?? DEFAULT_INSTALL_URL;
    let build: string | undefined;
    try {
      const response = await (this.options.fetch ?? globalThis.fetch)(url, {
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 15_000),
      });
      build = response.ok ? buildFromInstallScript(await response.text()) : undefined;
      if (!response.ok) this.logger.warn("Cursor's install script could not be read", { url, status: response.status });
    } catch (error) {
      this.logger.warn("Cursor's install script could not be read", { url, error });
      return false;
    }
    if (build === undefined || compareClientVersions(build, this.version) <= 0) {
      if (build === undefined) this.logger.warn("Cursor's install script names no build", { url });
      return false;
    }
    const previous = this.version;
    this.version = build;
    this.source = "learned";
    this.logger.info("Using a newer Cursor client version learned from Cursor's install script", {
      previous,
      clientVersion: build,
      reason,
    });
    await this.options.persist?.(build).catch((error: unknown) => {
      this.logger.warn("could not keep the learned client version in the data dir", { error });
    });
    return true;
  }
}

/** How often a serving bridge reads the policy again. */
export const VERSION_CHECK_INTERVAL_MS = 24 * 60 * 60 * 1000;

/**
 * How long after its start a serving bridge first reads the policy: not during the start, whose first answer would
 * wait for the call.
 */
export const FIRST_VERSION_CHECK_DELAY_MS = 10_000;
