/** The base URL the service answers on; known for certain only once it listens (port 0 picks one). */
export class ServiceUrl {
  private actual: string | null = null;
  private heard: (url: string) => void = () => undefined;
  /** Resolves with the URL once the server listens. */
  readonly listening: Promise<string> = new Promise((resolve) => (this.heard = resolve));

  constructor(private readonly configured: string) {}

  /** Called once the server listens. */
  set(url: string): void {
    this.actual = url;
    this.heard(url);
  }

  get(): string {
    return this.actual ?? this.configured;
  }
}

export function urlOf(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}
