import { Logger as PinoLogger, pino } from 'pino';
import pretty from 'pino-pretty';
import { Logger as NestPinoLogger, PinoLogger as NestPinoAdapter } from 'nestjs-pino';
import { LogLevel } from '../config/config.schema';

/** JSON lines for machines (stdout not a terminal), pretty lines on a terminal. Synchronous, so an exit loses nothing. */
export function createRootLogger(level: LogLevel, terminal: boolean): PinoLogger {
  const options = { level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (label: string) => ({ level: label }) } };
  return terminal ? pino(options, pretty({ colorize: true, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid' })) : pino(options);
}

/** Nest's wiring at boot (modules loaded, one line per route mapped): detail for debugging, not news at info. */
const WIRING = new Set(['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication']);

/** Nest's logger (every `new Logger(context)` of the service) writing to the root logger, with the wiring at debug. */
export class NestLogger extends NestPinoLogger {
  constructor(root: PinoLogger) {
    super(new NestPinoAdapter({ pinoHttp: { logger: root } }), {});
  }

  override log(message: unknown, ...params: unknown[]): void {
    const context = params.at(-1);
    if (typeof context === 'string' && WIRING.has(context)) this.debug(message, ...params);
    else super.log(message, ...params);
  }
}
