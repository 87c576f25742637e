/**
 * A logger that keeps what is logged at info and warn (the levels the stores report removals and damage at), for
 * tests that check a store says what it removed and why.
 */
import type { Logger } from "../../src/util/logger.js";

export interface CapturedLine {
  message: string;
  fields: Record<string, unknown> | undefined;
}

export function capturingLogger(): { logger: Logger; lines: CapturedLine[] } {
  const lines: CapturedLine[] = [];
  const logger: Logger = {
    debug: () => {},
    info: (message, fields) => lines.push({ message, fields }),
    warn: (message, fields) => lines.push({ message, fields }),
    error: () => {},
    child: () => logger,
  };
  return { logger, lines };
}
