/**
 * A tiny HTTP/1.1-only reverse proxy for transport tests: it stands in for a network path that does not speak
 * HTTP/2 (so the client's HTTP/2 attempt fails before any server output) and forwards every request to an upstream
 * over HTTP/2 (h2c) or HTTP/1.1. It also records the BidiAppend requests passing through, so tests can check
 * `append_seqno` order as the server saw it.
 */
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { type ClientHttp2Session, connect, constants } from "node:http2";
import type { AddressInfo } from "node:net";
import { fromBinary } from "@bufbuild/protobuf";
import { type BidiAppendRequest, BidiAppendRequestSchema } from "../../../src/gen/aiserver/v1/bidi_pb.js";

/** A running proxy. */
export interface H1Proxy {
  url: string;
  appends: BidiAppendRequest[];
  /** Paths requested, in arrival order. */
  paths: string[];
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "host", "proxy-connection"]);

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function forwardHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(req.headers)) {
    if (value === undefined || HOP_BY_HOP.has(key)) continue;
    out[key] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

/** Starts the proxy on 127.0.0.1:0 in front of `upstream` (which speaks `upstreamVersion`). */
export async function startH1Proxy(upstream: string, upstreamVersion: "2" | "1.1"): Promise<H1Proxy> {
  const appends: BidiAppendRequest[] = [];
  const paths: string[] = [];
  let session: ClientHttp2Session | undefined;
  const h2 = () => {
    if (session === undefined || session.destroyed || session.closed) session = connect(upstream);
    return session;
  };

  const viaHttp2 = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const stream = h2().request({
      ...forwardHeaders(req),
      [constants.HTTP2_HEADER_METHOD]: req.method ?? "POST",
      [constants.HTTP2_HEADER_PATH]: req.url ?? "/",
    });
    stream.on("response", (headers) => {
      const out: Record<string, string | string[]> = {};
      for (const [key, value] of Object.entries(headers)) {
        if (!key.startsWith(":") && value !== undefined) out[key] = value;
      }
      res.writeHead(Number(headers[constants.HTTP2_HEADER_STATUS] ?? 502), out);
      stream.pipe(res);
    });
    stream.on("error", () => res.destroy());
    res.on("close", () => stream.close());
    stream.end(body);
  };

  const viaHttp1 = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const target = new URL(req.url ?? "/", upstream);
    const out = httpRequest(target, { method: req.method ?? "POST", headers: forwardHeaders(req) }, (upstreamRes) => {
      res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
      upstreamRes.pipe(res);
    });
    out.on("error", () => res.destroy());
    res.on("close", () => out.destroy());
    out.end(body);
  };

  const server: Server = createServer((req, res) => {
    paths.push(req.url ?? "");
    readBody(req).then(
      (body) => {
        if (req.url === "/aiserver.v1.BidiService/BidiAppend") appends.push(fromBinary(BidiAppendRequestSchema, body));
        if (upstreamVersion === "2") viaHttp2(req, res, body);
        else viaHttp1(req, res, body);
      },
      () => res.destroy(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    appends,
    paths,
    close: async () => {
      session?.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
