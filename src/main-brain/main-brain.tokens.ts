/** The hosted main brain (BrainHost), or null when rounds go to a brain the user brings (stream, command, webhook). */
export const BRAIN_HOST = Symbol('BrainHost');
/** Who reads the main chat and the rounds now (a BrainPresenceSource). */
export const BRAIN_PRESENCE = Symbol('BRAIN_PRESENCE');
