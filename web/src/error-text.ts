/** What to show of a failed call: its message. */
export const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));
