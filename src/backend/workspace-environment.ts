/**
 * The workspace description sent in `RequestContext.env` (docs/protocol.md §4.5 RequestContextEnv). Built once
 * from the machine at the composition root (or by this default), never read from globals deeper in the backend.
 */
import { platform, release } from "node:os";

/** What the server is told about the user's workspace. cursor-bridge never runs anything there itself. */
export interface WorkspaceEnvironment {
  /** e.g. `linux 6.8.0` (CARL: `${platform} ${release}`). */
  osVersion: string;
  /** Absolute workspace path. */
  workspacePath: string;
  /** Shell name, e.g. `bash`. */
  shell: string;
  /** IANA time zone. */
  timeZone: string;
}

/** Inputs of {@link defaultWorkspaceEnvironment}; every field has a production default. */
export interface WorkspaceEnvironmentInputs {
  platform?: NodeJS.Platform;
  release?: string;
  cwd?: string;
  shell?: string;
  timeZone?: string;
}

/**
 * The one place that reads the machine for the workspace defaults. The time zone is read on first use: asking Intl
 * loads the ICU time zone data (tens of milliseconds), which a server should not spend before it serves.
 */
export function defaultWorkspaceEnvironment(inputs: WorkspaceEnvironmentInputs = {}): WorkspaceEnvironment {
  const os = inputs.platform ?? platform();
  let timeZone = inputs.timeZone;
  return {
    osVersion: `${os} ${inputs.release ?? release()}`,
    workspacePath: inputs.cwd ?? process.cwd(),
    shell: inputs.shell ?? (os === "win32" ? "powershell" : "bash"),
    get timeZone() {
      timeZone ??= Intl.DateTimeFormat().resolvedOptions().timeZone;
      return timeZone;
    },
  };
}
