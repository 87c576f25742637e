import { describe, expect, it } from "vitest";
import { systemTimeZone, type TimeZoneSources } from "./workspace-environment.js";

const ZONES = new Set([
  "/z/Europe/Berlin",
  "/z/Etc/UTC",
  "/z/UTC",
  "/z/America/Argentina/Buenos_Aires",
  "/z/Etc/GMT+5",
]);

function sources(overrides: TimeZoneSources): TimeZoneSources {
  return {
    tz: undefined,
    zoneinfoDir: "/z",
    localtimeLink: () => undefined,
    timezoneFile: () => undefined,
    zoneExists: (path) => ZONES.has(path),
    intl: () => "Intl/Answer",
    ...overrides,
  };
}

describe("systemTimeZone", () => {
  it("reads TZ first, with or without the leading colon", () => {
    expect(systemTimeZone(sources({ tz: "Europe/Berlin", localtimeLink: () => "/usr/share/zoneinfo/Etc/UTC" }))).toBe(
      "Europe/Berlin",
    );
    expect(systemTimeZone(sources({ tz: ":America/Argentina/Buenos_Aires" }))).toBe("America/Argentina/Buenos_Aires");
  });

  it("asks Intl when TZ is set to something that is not a zone file (a POSIX rule string)", () => {
    expect(systemTimeZone(sources({ tz: "CET-1CEST,M3.5.0,M10.5.0/3" }))).toBe("Intl/Answer");
    expect(systemTimeZone(sources({ tz: "Mars/Olympus", localtimeLink: () => "/x/zoneinfo/Europe/Berlin" }))).toBe(
      "Intl/Answer",
    );
  });

  it("follows the /etc/localtime link (absolute or relative), then /etc/timezone", () => {
    expect(systemTimeZone(sources({ localtimeLink: () => "/usr/share/zoneinfo/Europe/Berlin" }))).toBe("Europe/Berlin");
    expect(systemTimeZone(sources({ localtimeLink: () => "../usr/share/zoneinfo/Etc/GMT+5" }))).toBe("Etc/GMT+5");
    expect(systemTimeZone(sources({ timezoneFile: () => "Europe/Berlin\n" }))).toBe("Europe/Berlin");
    expect(
      systemTimeZone(sources({ localtimeLink: () => "/etc/custom-zone", timezoneFile: () => "Europe/Berlin\n" })),
    ).toBe("Europe/Berlin");
  });

  it("reports the UTC names as Intl does", () => {
    expect(systemTimeZone(sources({ localtimeLink: () => "/usr/share/zoneinfo/Etc/UTC" }))).toBe("UTC");
    expect(systemTimeZone(sources({ tz: "UTC" }))).toBe("UTC");
  });

  it("rejects names that could escape the zone folder, and falls back to Intl when nothing names a zone", () => {
    const escaping = sources({ tz: "../../etc/passwd", zoneExists: () => true });
    expect(systemTimeZone(escaping)).toBe("Intl/Answer");
    expect(systemTimeZone(sources({}))).toBe("Intl/Answer");
  });

  it("agrees with Intl on this machine", () => {
    const intl = Intl.DateTimeFormat().resolvedOptions().timeZone;
    const zone = systemTimeZone();
    // A region alias may differ in spelling (Asia/Kolkata vs Intl's Asia/Calcutta), never in offset.
    const offsets = (timeZone: string) =>
      [0, 6].map((month) =>
        new Intl.DateTimeFormat("en-US", { timeZone, timeZoneName: "longOffset" }).format(new Date(2026, month, 15)),
      );
    expect(offsets(zone)).toEqual(offsets(intl));
  });
});
