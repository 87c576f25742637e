/** Every metric's name starts with it. */
export const METRIC_PREFIX = "cursor_bridge_";
