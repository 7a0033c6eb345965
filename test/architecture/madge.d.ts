/** The part of madge's API the architecture checks use (madge ships no types). */
declare module 'madge' {
  interface MadgeConfig {
    fileExtensions?: string[];
    tsConfig?: string;
    detectiveOptions?: Record<string, Record<string, unknown>>;
  }
  interface MadgeInstance {
    /** Each file (relative to the common base of the paths given) with the files it imports. */
    obj(): Record<string, string[]>;
    circular(): string[][];
  }
  function madge(paths: string | string[], config?: MadgeConfig): Promise<MadgeInstance>;
  export = madge;
}
