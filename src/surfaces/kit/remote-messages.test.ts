import { describe, expect, it } from "vitest";
import { ProxyError } from "../../util/errors.js";
import { decideError, forRemoteClient } from "./error-policy.js";

describe("messages to a team member (a virtual key's holder)", () => {
  it("never name an operator command; they point to the person who runs the server", () => {
    const login = new ProxyError("unauthenticated", "Cursor refused the credentials.");
    const local = decideError(login).message;
    expect(local).toMatch(/`(cursor-bridge|npm run --silent cli --) login`/);
    const remote = decideError(login, { remote: true }).message;
    expect(remote).not.toMatch(/`(cursor-bridge|npm run)/);
    expect(remote).toBe("Cursor refused the credentials. The person who runs this server can fix it.");
    expect(forRemoteClient("No login for `gpu`; run `cursor-bridge login --account gpu` first.")).toBe(
      "No login for `gpu`; The person who runs this server can fix it.",
    );
    expect(forRemoteClient("Nothing to hide here.")).toBe("Nothing to hide here.");
  });

  it("never name the server's files", () => {
    const missing =
      "No Cursor credentials found (looked in /home/op/.config/cursor-bridge/credentials.json); run `cursor-bridge login` first.";
    expect(forRemoteClient(missing)).toBe("No Cursor credentials found; The person who runs this server can fix it.");
    expect(
      forRemoteClient(
        "The credential file /srv/cb/credentials.json is not a valid cursor-bridge credential file (bad).",
      ),
    ).toBe(
      "The credential file on the server is not a valid cursor-bridge credential file (bad). The person who runs this server can fix it.",
    );
    expect(forRemoteClient("GET /v1/models lists the models.")).toBe("GET /v1/models lists the models.");
  });
});
