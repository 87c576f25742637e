/**
 * The HTTP/1.1 "BidiSse" transport (docs/protocol.md §4.3): `RunSSE` opens the server stream for a request id,
 * each `BidiAppend` carries one hex-encoded AgentClientMessage with its `append_seqno` (0, 1, 2…). Current clients
 * keep up to 16 appends in flight, so they arrive out of order (cursor-protocol-addendum-2.md §2): they are applied
 * in seqno order, an early one held until the gap before it fills; a gap still open after the bounded wait ends the
 * Run with an error; a repeated seqno is idempotent. Appends that arrive before RunSSE opens are buffered, as
 * clients send the first append concurrently with opening the stream (§4.3 step 4).
 */
import { fromBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { AgentClientMessageSchema } from "../gen/agent/v1/agent_pb.js";
import type { BidiAppendRequest } from "../gen/aiserver/v1/bidi_pb.js";
import type { Logger } from "../util/logger.js";
import { badRequest } from "./errors.js";
import { AsyncQueue } from "./queue.js";
import type { InboundMessage } from "./turn-channel.js";

/** Buffered appends without a RunSSE are dropped after this long. */
const PENDING_TTL_MS = 30_000;
/** Ended request ids are remembered this long, so late appends (a trailing heartbeat) are not errors. */
const ENDED_TTL_MS = 60_000;

/** @default how long an early append waits for the gap before it to fill. */
export const DEFAULT_APPEND_GAP_TIMEOUT_MS = 10_000;

interface Session {
  queue: AsyncQueue<InboundMessage>;
  nextSeqno: number;
  /** Appends that arrived ahead of nextSeqno, by seqno. */
  held: Map<number, InboundMessage>;
  /** Armed while a gap is open. */
  gapTimer: NodeJS.Timeout | undefined;
  opened: boolean;
  ended: boolean;
  timer: NodeJS.Timeout | undefined;
}

/** Request id of a RunSSE/BidiAppend call: the body's, else `x-request-id`; both present must agree. */
export function requestIdOf(bodyId: string | undefined, header: Headers): string {
  const headerId = header.get("x-request-id") ?? "";
  const id = bodyId ?? "";
  if (id !== "" && headerId !== "" && id !== headerId) {
    throw badRequest(`BidiRequestId "${id}" does not match x-request-id "${headerId}".`);
  }
  const chosen = id || headerId;
  if (chosen === "") throw badRequest("Missing bidi request id (BidiRequestId.request_id or x-request-id).");
  return chosen;
}

/** Decodes the append payload: `data_binary` when present, else the hex `data` (§4.3). */
export function decodeAppend(request: BidiAppendRequest): InboundMessage {
  let bytes: Uint8Array;
  if (request.dataBinary.length > 0) bytes = request.dataBinary;
  else {
    if (!/^(?:[0-9a-fA-F]{2})*$/.test(request.data)) throw badRequest("BidiAppendRequest.data is not hex.");
    bytes = new Uint8Array(Buffer.from(request.data, "hex"));
  }
  try {
    return { message: fromBinary(AgentClientMessageSchema, bytes), size: bytes.length };
  } catch (error) {
    throw badRequest(`BidiAppendRequest.data is not a valid AgentClientMessage: ${String(error)}`);
  }
}

/** Open RunSSE streams and buffered appends, by request id. */
export class BidiSessions {
  private readonly sessions = new Map<string, Session>();

  constructor(
    private readonly logger: Logger,
    private readonly gapTimeoutMs = DEFAULT_APPEND_GAP_TIMEOUT_MS,
  ) {}

  /** Opens the RunSSE side; its inbound yields the buffered and future appends in seqno order. */
  open(requestId: string): AsyncIterable<InboundMessage> {
    const existing = this.sessions.get(requestId);
    if (existing?.opened)
      throw new ConnectError(`RunSSE for request id ${requestId} is already open.`, Code.AlreadyExists);
    const session = existing ?? this.create(requestId);
    clearTimeout(session.timer);
    session.timer = undefined;
    session.opened = true;
    return session.queue;
  }

  /** Feeds one append: applied in seqno order, an early one held (bounded), a repeat ignored. */
  append(requestId: string, seqno: number, item: InboundMessage): void {
    const session = this.sessions.get(requestId) ?? this.create(requestId);
    if (!Number.isSafeInteger(seqno) || seqno < 0) throw badRequest(`append_seqno ${seqno} is not valid.`);
    if (seqno < session.nextSeqno || session.held.has(seqno)) {
      this.logger.debug("repeated append_seqno; ignored", { requestId, seqno });
      return;
    }
    if (session.ended) {
      this.logger.debug("append after the RunSSE stream ended; dropped", { requestId, seqno });
      return;
    }
    session.held.set(seqno, item);
    for (
      let next = session.held.get(session.nextSeqno);
      next !== undefined;
      next = session.held.get(session.nextSeqno)
    ) {
      session.held.delete(session.nextSeqno);
      session.nextSeqno++;
      session.queue.push(next);
    }
    clearTimeout(session.gapTimer);
    session.gapTimer = session.held.size === 0 ? undefined : this.armGap(requestId, session);
  }

  /** A gap that stays open for the bounded wait ends the Run with an error naming the missing seqno. */
  private armGap(requestId: string, session: Session): NodeJS.Timeout {
    const missing = session.nextSeqno;
    const timer = setTimeout(() => {
      session.gapTimer = undefined;
      if (session.nextSeqno !== missing || session.held.size === 0) return;
      const ahead = [...session.held.keys()].sort((a, b) => a - b);
      this.logger.info("BidiAppend gap never filled", { requestId, missing, ahead });
      session.held.clear();
      session.queue.fail(
        badRequest(
          `BidiAppend append_seqno ${missing} never arrived within ${this.gapTimeoutMs} ms ` +
            `(held ${ahead.join(", ")}) for request id ${requestId}.`,
        ),
      );
    }, this.gapTimeoutMs);
    timer.unref();
    return timer;
  }

  /** Ends a RunSSE stream; its id is remembered for a while. */
  end(requestId: string): void {
    const session = this.sessions.get(requestId);
    if (session === undefined) return;
    session.ended = true;
    session.queue.close();
    clearTimeout(session.gapTimer);
    session.held.clear();
    clearTimeout(session.timer);
    session.timer = this.expire(requestId, ENDED_TTL_MS);
  }

  /** Forgets everything and clears every timer. */
  closeAll(): void {
    for (const session of this.sessions.values()) {
      clearTimeout(session.timer);
      clearTimeout(session.gapTimer);
      session.queue.close();
    }
    this.sessions.clear();
  }

  private create(requestId: string): Session {
    const session: Session = {
      queue: new AsyncQueue(),
      nextSeqno: 0,
      held: new Map(),
      gapTimer: undefined,
      opened: false,
      ended: false,
      timer: this.expire(requestId, PENDING_TTL_MS),
    };
    this.sessions.set(requestId, session);
    return session;
  }

  private expire(requestId: string, ms: number): NodeJS.Timeout {
    const timer = setTimeout(() => {
      const session = this.sessions.get(requestId);
      if (session !== undefined && !(session.opened && !session.ended)) this.sessions.delete(requestId);
    }, ms);
    timer.unref();
    return timer;
  }
}
