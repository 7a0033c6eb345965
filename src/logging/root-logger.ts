import { Logger as PinoLogger, pino } from 'pino';
import pretty from 'pino-pretty';
import { Logger as NestPinoLogger, PinoLogger as NestPinoAdapter } from 'nestjs-pino';
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
