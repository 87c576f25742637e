/**
 * The `GetServerConfig.http2_config` hints the emulator can send (docs/emulator.md, `emulator --http2-config`), by
 * the names its option takes; a module of its own so the command's option check loads no protocol code.
 */

/** The hint names, in the order of Cursor's enum values 1–4 (cursor-protocol-addendum-3.md E13). */
export const EMULATOR_HTTP2_CONFIGS = [
  "force-all-disabled",
  "force-all-enabled",
  "force-bidi-disabled",
  "force-bidi-enabled",
] as const;

/** One hint name. */
export type EmulatorHttp2Config = (typeof EMULATOR_HTTP2_CONFIGS)[number];
