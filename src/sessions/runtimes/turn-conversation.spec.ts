import { ACTIVITY_OUTPUT_MAX_BYTES } from '../loops/loop-text';
import { claudeActivity } from './claude-code.runtime';
import { codexProtocol } from './codex.runtime';
import { geminiProtocol } from './gemini-cli.runtime';
import { opencodeProtocol } from './opencode.runtime';
import { LaunchSpec, WorkerActivity } from './runtime.port';
import { Turn, TurnActivity } from './turn-conversation';

const spec: LaunchSpec = { session_id: 'cs_1', cwd: '/w', command: null, args: ['--extra'], profile_args: ['-c', 'model="m"'], env: {}, sandbox: null };

describe('Turn', () => {
  it('given streamed deltas, then the result is the message they make; a tool call starts a new message', () => {
    const turn = new Turn();
    turn.say('Look', true);
    turn.say('ing.', true);
    expect(turn.result('x', 0, null)).toBe('Looking.');
    turn.toolUsed();
    turn.say('Do', true);
    turn.say('ne', true);
    expect(turn.result('x', 0, null)).toBe('Done');
  });

  it('given a complete message, then it replaces the one before', () => {
    const turn = new Turn();
    turn.say('first');
    turn.say('second');
    expect(turn.result('x', 0, null)).toBe('second');
  });

  it('given a failure, then it wins over any text, and the first failure is kept', () => {
    const turn = new Turn();
    turn.say('partial');
    turn.fail('quota exceeded');
    turn.fail('exit 1');
    expect(turn.result('codex', 1, null)).toBe('codex turn failed: quota exceeded');
  });

  it('given trouble the turn got over (an answer or a completion after it), then it is forgotten; otherwise it is the failure', () => {
    const answered = new Turn();
    answered.troubled('Reconnecting... 1/5');
    answered.say('done');
    expect(answered.result('codex', 0, null)).toBe('done');
    const completed = new Turn();
    completed.say('done');
    completed.troubled('Reconnecting... 1/5');
    completed.completed();
    expect(completed.result('codex', 0, null)).toBe('done');
    const lost = new Turn();
    lost.say('partial');
    lost.troubled('Reconnecting... 1/5');
    lost.troubled('stream disconnected');
    expect(lost.result('codex', 1, null)).toBe('codex turn failed: stream disconnected');
  });

  it('given no text, then a clean exit has no result and an unclean one says how it ended', () => {
    expect(new Turn().result('codex', 0, null)).toBeNull();
    expect(new Turn().result('codex', 2, null)).toBe('codex exited with code 2 before answering');
    expect(new Turn().result('gemini-cli', null, 'SIGKILL')).toBe('gemini-cli exited with SIGKILL before answering');
  });

  it('given a text over 64 KiB, then the result is cut to the journal limit with a note', () => {
    const turn = new Turn();
    turn.say('é'.repeat(40 * 1024));
    expect(turn.result('x', 0, null)).toMatch(/\[brainstem: cut to 64 KiB of 81920 bytes\]$/);
  });
});

describe('codexProtocol', () => {
  it('runs `exec --json` with the options before `resume`, and the prompt from stdin', () => {
    expect(codexProtocol.args(spec, null)).toEqual(['exec', '--json', '-c', 'model="m"', '--extra', '-']);
    expect(codexProtocol.args(spec, 't1')).toEqual(['exec', '--json', '-c', 'model="m"', '--extra', 'resume', 't1', '-']);
  });

  it('reads the thread id, the agent messages and the failures; other items are only logged', () => {
    const turn = new Turn();
    expect(codexProtocol.read({ type: 'thread.started', thread_id: 't1' }, turn)).toBe('t1');
    codexProtocol.read({ type: 'item.completed', item: { id: 'i0', type: 'reasoning', text: 'hmm' } }, turn);
    codexProtocol.read({ type: 'item.completed', item: { id: 'i1', type: 'agent_message', text: 'done' } }, turn);
    codexProtocol.read({ type: 'item.completed', item: { id: 'i2', type: 'command_execution', command: 'ls' } }, turn);
    expect(turn.result('codex', 0, null)).toBe('done');
    codexProtocol.read({ type: 'turn.failed', error: { message: 'boom' } }, turn);
    expect(turn.result('codex', 1, null)).toBe('codex turn failed: boom');
  });

  it('given errors while codex retries a dropped stream, then a turn that completes after them has its answer', () => {
    // As codex 0.169 prints them when the model's stream drops and a retry succeeds.
    const turn = new Turn();
    codexProtocol.read({ type: 'turn.started' }, turn);
    codexProtocol.read({ type: 'error', message: 'Reconnecting... 1/5 (stream disconnected before completion: stream closed before response.completed)' }, turn);
    codexProtocol.read({ type: 'error', message: 'Reconnecting... 2/5 (stream disconnected before completion: stream closed before response.completed)' }, turn);
    codexProtocol.read({ type: 'item.completed', item: { id: 'item_0', type: 'agent_message', text: 'reply 3' } }, turn);
    codexProtocol.read({ type: 'turn.completed', usage: { input_tokens: 5, output_tokens: 2 } }, turn);
    expect(turn.result('codex', 0, null)).toBe('reply 3');
    const failed = new Turn();
    codexProtocol.read({ type: 'error', message: 'Reconnecting... 5/5 (stream disconnected before completion)' }, failed);
    codexProtocol.read({ type: 'error', message: 'stream disconnected before completion' }, failed);
    expect(failed.result('codex', 1, null)).toBe('codex turn failed: stream disconnected before completion');
  });
});

describe('geminiProtocol', () => {
  it('runs headless stream-json, adding --resume with the session id', () => {
    expect(geminiProtocol.args(spec, null)).toEqual(['--output-format', 'stream-json', '-c', 'model="m"', '--extra']);
    expect(geminiProtocol.args(spec, 's1')).toEqual(['--output-format', 'stream-json', '-c', 'model="m"', '--extra', '--resume', 's1']);
  });

  it('reads the session id, assistant deltas (not the echoed user message), and errors but not warnings', () => {
    const turn = new Turn();
    expect(geminiProtocol.read({ type: 'init', session_id: 's1', model: 'g' }, turn)).toBe('s1');
    geminiProtocol.read({ type: 'message', role: 'user', content: 'question' }, turn);
    geminiProtocol.read({ type: 'message', role: 'assistant', content: 'An', delta: true }, turn);
    geminiProtocol.read({ type: 'message', role: 'assistant', content: 'swer', delta: true }, turn);
    geminiProtocol.read({ type: 'error', severity: 'warning', message: 'slow' }, turn);
    expect(turn.result('gemini-cli', 0, null)).toBe('Answer');
    geminiProtocol.read({ type: 'result', status: 'error', error: { type: 'E', message: 'quota' } }, turn);
    expect(turn.result('gemini-cli', 1, null)).toBe('gemini-cli turn failed: quota');
  });
});

describe('opencodeProtocol: a tool call that fails', () => {
  // As opencode 1.18.33 reports a bash call a headless run may not ask about, and then ends the run.
  const rejected = {
    type: 'tool_use',
    sessionID: 'ses_1',
    part: { type: 'tool', tool: 'bash', callID: 'toolu_2', state: { status: 'error', input: { command: 'touch probe-marker', description: 'make a marker' }, error: 'The user rejected permission to use this specific tool call.' } },
  };

  it('given nothing follows it, then the turn failed with what was called and why', () => {
    const turn = new Turn();
    opencodeProtocol.read({ type: 'text', sessionID: 'ses_1', part: { type: 'text', text: 'I will make a marker.' } }, turn);
    opencodeProtocol.read(rejected, turn);
    expect(turn.result('opencode', 0, null)).toBe('opencode turn failed: bash (touch probe-marker): The user rejected permission to use this specific tool call.');
  });

  it('given the agent answers after it, then the answer is the result', () => {
    const turn = new Turn();
    opencodeProtocol.read(rejected, turn);
    opencodeProtocol.read({ type: 'text', sessionID: 'ses_1', part: { type: 'text', text: 'I could not run it; here is why.' } }, turn);
    expect(turn.result('opencode', 0, null)).toBe('I could not run it; here is why.');
  });
});

describe('opencodeProtocol', () => {
  it('runs `run --format json`, adding --session with the session id', () => {
    expect(opencodeProtocol.args(spec, null)).toEqual(['run', '--format', 'json', '-c', 'model="m"', '--extra']);
    expect(opencodeProtocol.args(spec, 'ses_1')).toEqual(['run', '--format', 'json', '-c', 'model="m"', '--extra', '--session', 'ses_1']);
  });

  it('reads the session id every event names, the text parts, and the error message', () => {
    const turn = new Turn();
    expect(opencodeProtocol.read({ type: 'step_start', sessionID: 'ses_1', part: { type: 'step-start' } }, turn)).toBe('ses_1');
    opencodeProtocol.read({ type: 'text', sessionID: 'ses_1', part: { type: 'text', text: 'Looking.' } }, turn);
    opencodeProtocol.read({ type: 'tool_use', sessionID: 'ses_1', part: { type: 'tool', tool: 'read' } }, turn);
    opencodeProtocol.read({ type: 'text', sessionID: 'ses_1', part: { type: 'text', text: 'Done.' } }, turn);
    expect(turn.result('opencode', 0, null)).toBe('Done.');
    opencodeProtocol.read({ type: 'error', sessionID: 'ses_1', error: { name: 'APIError', data: { message: 'rate limited' } } }, turn);
    expect(turn.result('opencode', 1, null)).toBe('opencode turn failed: rate limited');
    const bare = new Turn();
    opencodeProtocol.read({ type: 'error', sessionID: 'ses_1', error: { name: 'ProviderAuthError' } }, bare);
    expect(bare.result('opencode', 1, null)).toBe('opencode turn failed: ProviderAuthError');
  });
});

/** A turn whose listener keeps what it reports. */
function listened(): { turn: Turn; activity: TurnActivity[] } {
  const activity: TurnActivity[] = [];
  return { turn: new Turn((a) => activity.push(a)), activity };
}

describe('Turn, listened to', () => {
  it('given deltas, then each is reported as it comes, and the message they make once whole: at a tool call and at the end', () => {
    const { turn, activity } = listened();
    turn.say('Look', true);
    turn.say('ing.', true);
    turn.toolUsed('glob', { pattern: '*' });
    turn.say('Done', true);
    turn.ended();
    turn.ended();
    expect(activity).toEqual([
      { kind: 'text_delta', text: 'Look' },
      { kind: 'text_delta', text: 'ing.' },
      { kind: 'text', text: 'Looking.' },
      { kind: 'tool_use', name: 'glob', input: { pattern: '*' } },
      { kind: 'text_delta', text: 'Done' },
      { kind: 'text', text: 'Done' },
    ]);
  });

  it('given complete messages, then each is reported once, and the end reports nothing more', () => {
    const { turn, activity } = listened();
    turn.say('first');
    turn.say('second');
    turn.ended();
    expect(activity).toEqual([{ kind: 'text', text: 'first' }, { kind: 'text', text: 'second' }]);
    expect(turn.lastText).toBe('second');
  });

  it('given a failure, repeated, then it is reported once as an API error, and is the failure reason', () => {
    const { turn, activity } = listened();
    turn.fail('quota exceeded');
    turn.fail('quota exceeded');
    expect(activity).toEqual([{ kind: 'api_error', message: 'quota exceeded' }]);
    expect(turn.failureReason).toBe('quota exceeded');
    expect(turn.contextExceeded).toBe(false);
  });
});

describe('the protocols, listened to', () => {
  it('codex: a started item that acts is a tool use (an MCP call by its server and tool), the completed turn its usage, and its context message a full context', () => {
    const { turn, activity } = listened();
    const command = { id: 'item_0', type: 'command_execution', command: "/bin/bash -lc 'echo hi'", aggregated_output: '', exit_code: null, status: 'in_progress' };
    codexProtocol.read({ type: 'item.started', item: command }, turn);
    codexProtocol.read({ type: 'item.completed', item: { ...command, aggregated_output: 'hi\n', exit_code: 0, status: 'completed' } }, turn);
    codexProtocol.read({ type: 'item.started', item: { id: 'item_1', type: 'mcp_tool_call', server: 'brainstem', tool: 'list_sessions', arguments: { limit: 5 }, status: 'in_progress' } }, turn);
    codexProtocol.read({ type: 'item.started', item: { id: 'item_2', type: 'reasoning', text: '' } }, turn);
    codexProtocol.read({ type: 'turn.completed', usage: { input_tokens: 10, cached_input_tokens: 0, output_tokens: 4 } }, turn);
    expect(activity).toEqual([
      { kind: 'tool_use', name: 'command_execution', input: { command: "/bin/bash -lc 'echo hi'" } },
      { kind: 'tool_use', name: 'mcp__brainstem__list_sessions', input: { limit: 5 } },
      { kind: 'usage', context_tokens: 10 },
    ]);
    const full = new Turn();
    codexProtocol.read({ type: 'turn.failed', error: { message: "Codex ran out of room in the model's context window. Start a new thread or clear earlier history before retrying." } }, full);
    expect(full.contextExceeded).toBe(true);
    const other = new Turn();
    codexProtocol.read({ type: 'turn.failed', error: { message: 'quota exceeded' } }, other);
    expect(other.contextExceeded).toBe(false);
  });

  it('gemini: a tool_use is a tool use, the result its usage, and an overflowing context a full context', () => {
    const { turn, activity } = listened();
    geminiProtocol.read({ type: 'tool_use', tool_name: 'list_directory', tool_id: 't1', parameters: { dir_path: '.' } }, turn);
    geminiProtocol.read({ type: 'result', status: 'success', stats: { total_tokens: 7, input_tokens: 5, output_tokens: 2 } }, turn);
    expect(activity).toEqual([{ kind: 'tool_use', name: 'list_directory', input: { dir_path: '.' } }, { kind: 'usage', context_tokens: 5 }]);
    const full = new Turn();
    geminiProtocol.read({ type: 'result', status: 'error', error: { type: 'Error', message: 'Context window will overflow (estimated: 9000, remaining: 10)' } }, full);
    expect(full.contextExceeded).toBe(true);
    expect(full.failureReason).toBe('Context window will overflow (estimated: 9000, remaining: 10)');
  });

  it("opencode: a tool_use part is a tool use with its input, a step's tokens (cached ones too) its usage, and a ContextOverflowError a full context", () => {
    const { turn, activity } = listened();
    opencodeProtocol.read({ type: 'tool_use', sessionID: 'ses_1', part: { type: 'tool', tool: 'glob', state: { status: 'completed', input: { pattern: '*.md' } } } }, turn);
    opencodeProtocol.read({ type: 'step_finish', sessionID: 'ses_1', part: { type: 'step-finish', tokens: { total: 9, input: 3, output: 1, cache: { write: 2, read: 4 } } } }, turn);
    expect(activity).toEqual([{ kind: 'tool_use', name: 'glob', input: { pattern: '*.md' } }, { kind: 'usage', context_tokens: 9 }]);
    const full = new Turn();
    opencodeProtocol.read({ type: 'error', sessionID: 'ses_1', error: { name: 'ContextOverflowError', data: { message: 'Session too large to compact - context exceeds model limit' } } }, full);
    expect(full.contextExceeded).toBe(true);
  });
});

/** A turn whose worker hook keeps what it reports for the loop detector. */
function watched(): { turn: Turn; activity: WorkerActivity[] } {
  const activity: WorkerActivity[] = [];
  return { turn: new Turn(undefined, (a) => activity.push(a)), activity };
}

describe("the protocols, as a worker's loop detector reads them", () => {
  it('codex: a started item is a tool call by its id, its completed item what came back (a failed command with its exit code); a file change is opaque', () => {
    const { turn, activity } = watched();
    const make = { id: 'item_0', type: 'command_execution', command: "/bin/bash -lc 'make'" };
    codexProtocol.read({ type: 'item.started', item: { ...make, aggregated_output: '', exit_code: null, status: 'in_progress' } }, turn);
    codexProtocol.read({ type: 'item.completed', item: { ...make, aggregated_output: 'make: *** [all] Error 2\n', exit_code: 2, status: 'failed' } }, turn);
    const change = { id: 'item_1', type: 'file_change', changes: [{ path: '/w/lib.js', kind: 'update' }] };
    codexProtocol.read({ type: 'item.started', item: { ...change, status: 'in_progress' } }, turn);
    codexProtocol.read({ type: 'item.completed', item: { ...change, status: 'completed' } }, turn);
    codexProtocol.read({ type: 'item.completed', item: { id: 'item_2', type: 'agent_message', text: 'done' } }, turn);
    expect(activity).toEqual([
      { kind: 'tool_call', call_id: 'item_0', tool: 'command_execution', input: { command: "/bin/bash -lc 'make'" } },
      { kind: 'tool_result', call_id: 'item_0', ok: false, exit_code: 2, output: 'make: *** [all] Error 2\n' },
      { kind: 'tool_call', call_id: 'item_1', tool: 'file_change', input: { changes: [{ path: '/w/lib.js', kind: 'update' }] }, opaque: true },
      { kind: 'tool_result', call_id: 'item_1', ok: true, exit_code: null, output: '' },
    ]);
  });

  it('gemini: tool_use and tool_result by tool_id; an error result says its message (gemini says no exit code)', () => {
    const { turn, activity } = watched();
    geminiProtocol.read({ type: 'tool_use', tool_name: 'read_file', tool_id: 'r1', parameters: { file_path: 'missing.txt' } }, turn);
    geminiProtocol.read({ type: 'tool_result', tool_id: 'r1', status: 'error', output: 'File not found.', error: { type: 'file_not_found', message: 'File not found: /w/missing.txt' } }, turn);
    geminiProtocol.read({ type: 'tool_result', tool_id: 'r2', status: 'success' }, turn);
    expect(activity).toEqual([
      { kind: 'tool_call', call_id: 'r1', tool: 'read_file', input: { file_path: 'missing.txt' } },
      { kind: 'tool_result', call_id: 'r1', ok: false, exit_code: null, output: 'File not found.' },
      { kind: 'tool_result', call_id: 'r2', ok: true, exit_code: null, output: '' },
    ]);
  });

  it('opencode: one tool_use part is the call and what came back; a bash exit code other than 0 fails it though opencode says completed', () => {
    const { turn, activity } = watched();
    const bash = { type: 'tool', tool: 'bash', callID: 'toolu_2', state: { status: 'completed', input: { command: 'npm test' }, output: '1 failed\n', metadata: { exit: 1 } } };
    opencodeProtocol.read({ type: 'tool_use', sessionID: 'ses_1', part: bash }, turn);
    opencodeProtocol.read({ type: 'tool_use', sessionID: 'ses_1', part: { type: 'tool', tool: 'read', callID: 'toolu_3', state: { status: 'error', input: { filePath: '/w/x' }, error: 'File not found: /w/x' } } }, turn);
    expect(activity).toEqual([
      { kind: 'tool_call', call_id: 'toolu_2', tool: 'bash', input: { command: 'npm test' } },
      { kind: 'tool_result', call_id: 'toolu_2', ok: false, exit_code: 1, output: '1 failed\n' },
      { kind: 'tool_call', call_id: 'toolu_3', tool: 'read', input: { filePath: '/w/x' } },
      { kind: 'tool_result', call_id: 'toolu_3', ok: false, exit_code: null, output: 'File not found: /w/x' },
    ]);
  });

  it('claude: an assistant message’s tool_use blocks are calls, a user message’s tool_result blocks what came back (Bash’s exit code read from its text)', () => {
    const calls = claudeActivity({ type: 'assistant', message: { content: [{ type: 'text', text: 'Running it.' }, { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'ls nope' } }] } });
    const results = claudeActivity({
      type: 'user',
      message: { content: [{ type: 'tool_result', tool_use_id: 'toolu_1', is_error: true, content: 'Exit code 2\nls: cannot access nope' }, { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: 'file body' }] }] },
    });
    expect([...calls, ...results]).toEqual([
      { kind: 'tool_call', call_id: 'toolu_1', tool: 'Bash', input: { command: 'ls nope' } },
      { kind: 'tool_result', call_id: 'toolu_1', ok: false, exit_code: 2, output: 'Exit code 2\nls: cannot access nope' },
      { kind: 'tool_result', call_id: 'toolu_2', ok: true, exit_code: null, output: 'file body' },
    ]);
    expect(claudeActivity({ type: 'user', message: { content: 'a plain message' } })).toEqual([]);
  });

  it('given a huge output, then what is reported keeps its head and its tail within the bound', () => {
    const { turn, activity } = watched();
    turn.toolResult('c1', false, 1, `${'head '.repeat(5000)}MIDDLE${' tail'.repeat(5000)} 3 failed`);
    const [r] = activity as Array<{ output: string }>;
    expect(Buffer.byteLength(r.output)).toBeLessThanOrEqual(ACTIVITY_OUTPUT_MAX_BYTES);
    expect(r.output.startsWith('head head')).toBe(true);
    expect(r.output.endsWith('tail 3 failed')).toBe(true);
    expect(r.output).not.toContain('MIDDLE');
  });
});
