/** The ways a worker goes round in circles that Brainstem tells apart (docs/guide/loops.md). */
export const LOOP_PATTERNS = ['repeated_call', 'alternation', 'repeated_failure', 'repeated_text', 'no_progress'] as const;
export type LoopPattern = (typeof LOOP_PATTERNS)[number];
