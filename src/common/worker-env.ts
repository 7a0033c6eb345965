/** The variables every worker gets: its session's id, and its own credential (minted for its session; never the user's API token). */
export const SESSION_ENV = 'BRAINSTEM_SESSION_ID';
export const TOKEN_ENV = 'BRAINSTEM_TOKEN';
