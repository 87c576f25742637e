/**
 * Opens a URL in the user's browser with the platform's opener (`open` on macOS, `xdg-open` elsewhere on POSIX,
 * `cmd /c start` on Windows). The opener is looked up on PATH first so a headless box just prints the URL.
 */
import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

/** The command that opens `url` on `platform`. */
export function openerCommand(platform: NodeJS.Platform, url: string): { file: string; args: string[] } {
  if (platform === "darwin") return { file: "open", args: [url] };
  // `start` is a cmd built-in; the empty title argument keeps a quoted URL from being taken as the window title.
  if (platform === "win32") return { file: "cmd", args: ["/c", "start", '""', url.replace(/&/g, "^&")] };
  return { file: "xdg-open", args: [url] };
}

/** True when `file` is an executable somewhere on `path`. */
export function findOnPath(file: string, path: string | undefined, platform: NodeJS.Platform): boolean {
  const extensions = platform === "win32" ? ["", ".exe", ".cmd", ".bat"] : [""];
  for (const dir of (path ?? "").split(delimiter)) {
    if (dir === "") continue;
    for (const extension of extensions) {
      try {
        accessSync(join(dir, file + extension), platform === "win32" ? constants.F_OK : constants.X_OK);
        return true;
      } catch {
        // not here
      }
    }
  }
  return false;
}

/**
 * Starts the opener detached; resolves to whether one was started. Never throws: failing to open a browser only
 * means the user copies the printed URL.
 */
export function openInBrowser(
  url: string,
  options: { platform: NodeJS.Platform; env: Readonly<Record<string, string | undefined>> },
): Promise<boolean> {
  const { file, args } = openerCommand(options.platform, url);
  if (!findOnPath(file, options.env.PATH ?? options.env.Path, options.platform)) return Promise.resolve(false);
  return new Promise((resolve) => {
    try {
      const child = spawn(file, args, { detached: true, stdio: "ignore", windowsHide: true });
      child.once("error", () => resolve(false));
      child.once("spawn", () => {
        child.unref();
        resolve(true);
      });
    } catch {
      resolve(false);
    }
  });
}
