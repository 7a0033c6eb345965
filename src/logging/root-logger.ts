import { LoggerService } from '@nestjs/common';
import { Logger as PinoLogger, pino } from 'pino';
import pretty from 'pino-pretty';
import { LogLevel } from '../config/config.schema';

/** JSON lines for machines (stdout not a terminal), pretty lines on a terminal. Synchronous, so an exit loses nothing. */
export function createRootLogger(level: LogLevel, terminal: boolean): PinoLogger {
  const options = { level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (label: string) => ({ level: label }) } };
  if (!terminal) return pino(options);
  return pino(
    options,
    pretty({
      colorize: true,
      sync: true,
      translateTime: 'SYS:HH:MM:ss.l',
      // One line per entry: the context and the request's id go into the message, not on lines below it.
      ignore: 'pid,context,req,res,responseTime',
      messageFormat: '{if context}[{context}] {end}{msg}{if req.id} (request {req.id}){end}',
    }),
  );
}

/** Nest's wiring at boot (modules loaded, one line per route mapped): detail for debugging, not news at info. */
const WIRING = new Set(['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication']);

type PinoLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * Nest's logger (every `new Logger(context)` of the service) writing to the root logger, with the wiring at debug.
 * Nest calls `log(message, context)` and `error(message, stack, context)`: the context is the last string.
 */
export class NestLogger implements LoggerService {
  constructor(private readonly root: PinoLogger) {}

  log(message: unknown, ...params: unknown[]): void {
    const context = params.at(-1);
    this.write(typeof context === 'string' && WIRING.has(context) ? 'debug' : 'info', message, params);
  }
  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }
  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }
  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }
  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }
  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }

  private write(level: PinoLevel, message: unknown, params: unknown[]): void {
    if (!this.root.isLevelEnabled(level)) return;
    const rest = [...params];
    const context = rest.length > 0 && typeof rest.at(-1) === 'string' ? (rest.pop() as string) : undefined;
    // error(message, stack, context): the stack is the string left before the context.
    const stack = level === 'error' || level === 'fatal' ? rest.find((p): p is string => typeof p === 'string') : undefined;
    const fields: Record<string, unknown> = {};
    if (context) fields.context = context;
    if (message instanceof Error) fields.err = message;
    else if (typeof message === 'object' && message !== null) Object.assign(fields, message);
    if (stack) fields.stack = stack;
    const text = message instanceof Error ? message.message : typeof message === 'object' && message !== null ? undefined : String(message);
    this.root[level](fields, text);
  }
}
