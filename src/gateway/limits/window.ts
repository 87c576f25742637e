/** The window rpm and tpm slide over (ms). */
export const WINDOW_MS = 60_000;
