import { Logger, LoggerService } from '@nestjs/common';

export interface LogLine {
  level: 'log' | 'error' | 'warn' | 'debug' | 'verbose' | 'fatal';
  context: string | undefined;
  message: string;
}

/**
 * Nest's logger, captured: every `new Logger(context)` of the service writes here from `capture()` on, whatever logger
 * the app was created with. `release()` silences it again (as test apps are: `logger: false`).
 */
export class CapturedLogger implements LoggerService {
  readonly lines: LogLine[] = [];

  static capture(): CapturedLogger {
    const logger = new CapturedLogger();
    Logger.overrideLogger(logger);
    return logger;
  }

  release(): void {
    Logger.overrideLogger(false);
  }

  /** The messages logged at `level` by `context`. */
  messages(level: LogLine['level'], context: string): string[] {
    return this.lines.filter((l) => l.level === level && l.context === context).map((l) => l.message);
  }

  log(message: unknown, ...params: unknown[]): void {
    this.push('log', message, params);
  }
  error(message: unknown, ...params: unknown[]): void {
    this.push('error', message, params);
  }
  warn(message: unknown, ...params: unknown[]): void {
    this.push('warn', message, params);
  }
  debug(message: unknown, ...params: unknown[]): void {
    this.push('debug', message, params);
  }
  verbose(message: unknown, ...params: unknown[]): void {
    this.push('verbose', message, params);
  }
  fatal(message: unknown, ...params: unknown[]): void {
    this.push('fatal', message, params);
  }

  /** Nest passes the logger's context as the last parameter. */
  private push(level: LogLine['level'], message: unknown, params: unknown[]): void {
    const context = params.at(-1);
    this.lines.push({ level, context: typeof context === 'string' ? context : undefined, message: String(message) });
  }
}
