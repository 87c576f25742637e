/** Raw HTTP/2 and HTTP/1.1 requests for the rules a connect-es client always satisfies (headers, framing). */
import { connect } from "node:http2";
import { createEnvelopeReader, FLAG_END_STREAM, parseEndStream } from "../../../src/protocol/connect/envelope.js";

/** A raw response: status, headers, body bytes. */
export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Uint8Array;
}

/** One HTTP/2 POST with exactly the given headers and body. */
export function h2Post(
  baseUrl: string,
  path: string,
  headers: Record<string, string>,
  body: Uint8Array,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const session = connect(baseUrl);
    session.on("error", reject);
    const request = session.request({ ":method": "POST", ":path": path, ...headers });
    const chunks: Buffer[] = [];
    let status = 0;
    let responseHeaders: RawResponse["headers"] = {};
    request.on("response", (h) => {
      status = Number(h[":status"]);
      responseHeaders = h;
    });
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      session.close();
      resolve({ status, headers: responseHeaders, body: new Uint8Array(Buffer.concat(chunks)) });
    });
    request.on("error", (error) => {
      session.destroy();
      reject(error);
    });
    request.end(Buffer.from(body));
  });
}

/** The Connect error of a response: the end-stream frame's error (streaming) or the JSON body (unary). */
export function connectErrorOf(response: RawResponse): { code: string; message: string } | undefined {
  const contentType = String(response.headers["content-type"] ?? "");
  if (contentType.startsWith("application/connect+")) {
    const reader = createEnvelopeReader();
    for (const frame of reader.push(response.body)) {
      if ((frame.flags & FLAG_END_STREAM) !== 0) return parseEndStream(frame.data).error;
    }
    return undefined;
  }
  if (response.status === 200) return undefined;
  const json = JSON.parse(new TextDecoder().decode(response.body)) as { code: string; message: string };
  return json;
}
