/** Waits written as people read them: "in 40 s", "in 3 min 20 s", "in 11 h 17 min", "in 2 d 4 h". */

/** `ms` from now as "in …" (two units at most, rounded up to the smaller one; never "in 0 s"). */
export function humanDuration(ms: number): string {
  const seconds = Math.max(1, Math.ceil(ms / 1000));
  if (seconds < 60) return `in ${seconds} s`;
  const minutes = Math.ceil(seconds / 60);
  if (seconds < 600) {
    const [m, s] = [Math.floor(seconds / 60), seconds % 60];
    return s === 0 ? `in ${m} min` : `in ${m} min ${s} s`;
  }
  if (minutes < 60) return `in ${minutes} min`;
  if (minutes < 24 * 60) {
    const [h, m] = [Math.floor(minutes / 60), minutes % 60];
    return m === 0 ? `in ${h} h` : `in ${h} h ${m} min`;
  }
  const hours = Math.ceil(minutes / 60);
  const [d, h] = [Math.floor(hours / 24), hours % 24];
  return h === 0 ? `in ${d} d` : `in ${d} d ${h} h`;
}
