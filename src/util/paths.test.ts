import { describe, expect, it } from "vitest";
import {
  cacheDir,
  configDir,
  cursorAgentVersionsDir,
  cursorCliAuthFile,
  cursorIdeStateDb,
  dataDir,
  type PathEnvironment,
} from "./paths.js";

const linux: PathEnvironment = { env: {}, platform: "linux", homedir: "/home/ana" };
const mac: PathEnvironment = { env: {}, platform: "darwin", homedir: "/Users/ana" };
const windows: PathEnvironment = {
  env: { APPDATA: "C:\\Users\\ana\\AppData\\Roaming", LOCALAPPDATA: "C:\\Users\\ana\\AppData\\Local" },
  platform: "win32",
  homedir: "C:\\Users\\ana",
};

describe("paths", () => {
  it("uses XDG defaults on Linux", () => {
    expect(configDir(linux)).toBe("/home/ana/.config/cursor-bridge");
    expect(dataDir(linux)).toBe("/home/ana/.local/share/cursor-bridge");
    expect(cacheDir(linux)).toBe("/home/ana/.cache/cursor-bridge");
    expect(cursorCliAuthFile(linux)).toBe("/home/ana/.config/cursor/auth.json");
    expect(cursorIdeStateDb(linux)).toBe("/home/ana/.config/Cursor/User/globalStorage/state.vscdb");
    expect(cursorAgentVersionsDir(linux)).toBe("/home/ana/.local/share/cursor-agent/versions");
  });

  it("honours absolute XDG variables and ignores relative or empty ones", () => {
    const env = { XDG_CONFIG_HOME: "/x/conf", XDG_DATA_HOME: "/x/data", XDG_CACHE_HOME: "relative/cache" };
    const p = { ...linux, env };
    expect(configDir(p)).toBe("/x/conf/cursor-bridge");
    expect(dataDir(p)).toBe("/x/data/cursor-bridge");
    expect(cacheDir(p)).toBe("/home/ana/.cache/cursor-bridge");
    expect(cursorCliAuthFile(p)).toBe("/x/conf/cursor/auth.json");
    expect(cursorIdeStateDb(p)).toBe("/x/conf/Cursor/User/globalStorage/state.vscdb");
    expect(configDir({ ...linux, env: { XDG_CONFIG_HOME: "" } })).toBe("/home/ana/.config/cursor-bridge");
  });

  it("uses Library folders on macOS", () => {
    expect(configDir(mac)).toBe("/Users/ana/Library/Application Support/cursor-bridge");
    expect(dataDir(mac)).toBe("/Users/ana/Library/Application Support/cursor-bridge");
    expect(cacheDir(mac)).toBe("/Users/ana/Library/Caches/cursor-bridge");
    expect(cursorCliAuthFile(mac)).toBe("/Users/ana/.cursor/auth.json");
    expect(cursorIdeStateDb(mac)).toBe("/Users/ana/Library/Application Support/Cursor/User/globalStorage/state.vscdb");
    expect(cursorAgentVersionsDir(mac)).toBe("/Users/ana/.local/share/cursor-agent/versions");
  });

  it("uses APPDATA and LOCALAPPDATA on Windows", () => {
    expect(configDir(windows)).toBe("C:\\Users\\ana\\AppData\\Roaming\\cursor-bridge");
    expect(dataDir(windows)).toBe("C:\\Users\\ana\\AppData\\Local\\cursor-bridge");
    expect(cacheDir(windows)).toBe("C:\\Users\\ana\\AppData\\Local\\cursor-bridge\\Cache");
    expect(cursorCliAuthFile(windows)).toBe("C:\\Users\\ana\\AppData\\Roaming\\Cursor\\auth.json");
    expect(cursorIdeStateDb(windows)).toBe(
      "C:\\Users\\ana\\AppData\\Roaming\\Cursor\\User\\globalStorage\\state.vscdb",
    );
  });

  it("falls back to the profile when APPDATA is unset on Windows", () => {
    const bare = { ...windows, env: {} };
    expect(configDir(bare)).toBe("C:\\Users\\ana\\AppData\\Roaming\\cursor-bridge");
    expect(dataDir(bare)).toBe("C:\\Users\\ana\\AppData\\Local\\cursor-bridge");
  });
});
