export const JOURNAL = Symbol('Journal');
