/**
 * `emulator --record DIR`: every Run's client and server messages as JSON lines, one file per Run named by its run
 * id, so a user can see what their client sent and what it got. Each line is
 * `{"at": <ms since epoch>, "from": "client"|"server", "type": "agent.v1.AgentClientMessage"|"agent.v1.AgentServerMessage", "message": <protobuf JSON>}`
 * (decode `message` with the project's schema: `fromJson(AgentClientMessageSchema, line.message)`); a failed Run ends
 * with `{"at", "from": "server", "error": {"code", "message"}}`.
 */
import { createWriteStream, type WriteStream } from "node:fs";
import { join } from "node:path";
import { toJson } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type AgentClientMessage,
  AgentClientMessageSchema,
  type AgentServerMessage,
  AgentServerMessageSchema,
} from "../gen/agent/v1/agent_pb.js";
import type { Logger } from "../util/logger.js";
import { makeDirSync } from "../util/make-dir.js";

/** The record of one Run. */
export interface RunRecording {
  client(message: AgentClientMessage): void;
  server(message: AgentServerMessage): void;
  error(error: unknown): void;
  close(): void;
}

/** Opens one file per Run in a directory. */
export interface RunRecorder {
  open(runId: string): RunRecording;
}

/** A recorder writing `<dir>/<run id>.jsonl` (created 0600; the directory is created when missing). */
export function createRunRecorder(dir: string, logger: Logger): RunRecorder {
  makeDirSync(dir);
  let sequence = 0;
  return {
    open(runId) {
      // A run id is the client's x-request-id: keep only safe characters, and never overwrite an earlier file.
      const safe = runId.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 100) || "run";
      sequence++;
      const path = join(dir, `${safe}-${Date.now()}-${sequence}.jsonl`);
      let out: WriteStream | undefined = createWriteStream(path, { flags: "wx", mode: 0o600 });
      out.on("error", (error) => {
        logger.warn("run recording failed", { path, error });
        out = undefined;
      });
      const line = (value: object): void => {
        out?.write(`${JSON.stringify({ at: Date.now(), ...value })}\n`);
      };
      return {
        client: (message) =>
          line({
            from: "client",
            type: AgentClientMessageSchema.typeName,
            message: toJson(AgentClientMessageSchema, message),
          }),
        server: (message) =>
          line({
            from: "server",
            type: AgentServerMessageSchema.typeName,
            message: toJson(AgentServerMessageSchema, message),
          }),
        error: (error) => {
          const connectError = ConnectError.from(error, Code.Internal);
          line({ from: "server", error: { code: Code[connectError.code], message: connectError.rawMessage } });
        },
        close: () => {
          out?.end();
          out = undefined;
        },
      };
    },
  };
}
