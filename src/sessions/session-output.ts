import { Logger } from '@nestjs/common';
import { Observable, Subject, concat, defer, filter, map, of } from 'rxjs';
import { SessionActor } from './session.actor';
import { SessionLog } from './session-log';
import { transcriptTail } from './external-transcript';

export const DEFAULT_TAIL = 100;

/** A message of a session's output stream: the tail first, then each chunk written. */
export type OutputStreamMessage = { type: 'tail'; data: { lines: string[] } } | { type: 'output'; data: { text: string } };

/**
 * What workers write: each session's log on disk (bounded), and the live tails (GET /coding-sessions/:id/output/stream).
 * An external session has no worker of ours: its output is its claude's transcript, read (bounded) under `home`'s
 * ~/.claude/projects only.
 */
export class SessionOutput {
  private readonly logger = new Logger('sessions');
  private readonly output$ = new Subject<{ id: string; text: string }>();

  constructor(
    private readonly logsDir: string,
    private readonly home: string,
  ) {}

  write(actor: SessionActor, chunk: Buffer): void {
    this.logOf(actor).write(chunk);
    // Decoded even with no one watching, so the decoder stays in step with the bytes when someone starts to.
    const text = actor.outputText.write(chunk);
    if (text !== '' && this.output$.observed) this.output$.next({ id: actor.id, text });
  }

  tail(actor: SessionActor, lines = DEFAULT_TAIL): string[] {
    const external = actor.context.external;
    if (external) return transcriptTail(this.home, external.transcript_path, lines);
    return this.logOf(actor).tail(lines);
  }

  /**
   * The output's tail, then each chunk the worker writes, as it comes. The tail is read when the stream is
   * subscribed, in the same turn: chunks are written synchronously, so none falls between the two or shows twice.
   */
  stream(actor: SessionActor, tail = DEFAULT_TAIL): Observable<OutputStreamMessage> {
    const id = actor.id;
    return defer(() =>
      concat(
        of<OutputStreamMessage>({ type: 'tail', data: { lines: this.tail(actor, tail) } }),
        this.output$.pipe(
          filter((o) => o.id === id),
          map((o): OutputStreamMessage => ({ type: 'output', data: { text: o.text } })),
        ),
      ),
    );
  }

  private logOf(actor: SessionActor): SessionLog {
    const onError = (e: Error) => this.logger.warn(`session ${actor.id}: output not logged: ${e.message}`);
    actor.log ??= SessionLog.in(this.logsDir, actor.id, undefined, onError);
    return actor.log;
  }
}
