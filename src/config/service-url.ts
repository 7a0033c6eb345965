/** The base URL the service answers on; known for certain only once it listens (port 0 picks one). */
export class ServiceUrl {
  private actual: string | null = null;

  constructor(private readonly configured: string) {}

  /** Called once the server listens. */
  set(url: string): void {
    this.actual = url;
  }

  get(): string {
    return this.actual ?? this.configured;
  }
}

export function urlOf(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}
