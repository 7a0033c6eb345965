import { IsInt, IsNotEmpty, IsOptional, IsString, Max, Min } from 'class-validator';
import { Describe, Requires } from '../common/dto-schema';
import { DomainError } from '../common/domain-error';
import { GatedCall, ToolRegistry } from './tool-registry';

class EchoArgs {
  @IsString() @IsNotEmpty() @Describe('What to repeat.') text!: string;
  @IsOptional() @IsInt() @Min(1) @Max(3) times?: number;
}
class NoArgs {}
class ScopeArgs {
  @IsOptional() @IsString() mode?: string;
  @IsOptional() @IsString({ each: true }) @Requires('mode') ids?: string[];
}
class DropArgs {
  @IsString() @IsNotEmpty() target!: string;
}

describe('tool registry', () => {
  const registry = new ToolRegistry();
  registry.register<{ text: string; times?: number }>({
    name: 'echo',
    description: 'Repeats text.',
    audience: 'main_brain',
    parameters: EchoArgs,
    handler: ({ text, times = 1 }) => text.repeat(times),
  });
  registry.register({
    name: 'whoami',
    description: 'The calling session.',
    audience: 'worker',
    parameters: NoArgs,
    handler: (_args, ctx) => ctx.session_id,
  });

  it('lists tools per audience with the JSON Schemas read from their DTOs', () => {
    expect(registry.list('main_brain')).toEqual([
      {
        name: 'echo',
        description: 'Repeats text.',
        parameters: {
          type: 'object',
          properties: { text: { type: 'string', minLength: 1, description: 'What to repeat.' }, times: { type: 'integer', minimum: 1, maximum: 3 } },
          required: ['text'],
          additionalProperties: false,
        },
      },
    ]);
    expect(registry.list('worker')).toEqual([{ name: 'whoami', description: 'The calling session.', parameters: { type: 'object', properties: {}, additionalProperties: false } }]);
  });

  it('calls a tool with valid arguments', async () => {
    expect(await registry.call('echo', { text: 'ab', times: 2 }, 'main_brain', { actor: 't' })).toBe('abab');
    expect(await registry.call('whoami', undefined, 'worker', { actor: 't', session_id: 'cs_1' })).toBe('cs_1');
  });

  it('answers bad arguments with a structured error naming each problem', async () => {
    await expect(registry.call('echo', { times: 9, extra: 1 }, 'main_brain', { actor: 't' })).rejects.toMatchObject({
      code: 'invalid_input',
      message: 'echo: extra: unknown field; text: is required; times: must not be greater than 3',
    });
    await expect(registry.call('echo', 'nope', 'main_brain', { actor: 't' })).rejects.toMatchObject({ code: 'invalid_input', message: 'echo: arguments: must be a JSON object' });
    await expect(registry.call('echo', { text: 'a', times: null }, 'main_brain', { actor: 't' })).rejects.toMatchObject({
      code: 'invalid_input',
      message: 'echo: times: must not be null (leave it out)',
    });
    await expect(registry.call('echo', { text: 'a', constructor: 1 }, 'main_brain', { actor: 't' })).rejects.toMatchObject({ code: 'invalid_input', message: expect.stringContaining('echo: constructor:') });
  });

  it('Given a tool of no arguments, When called with one, Then it is refused as unknown', async () => {
    await expect(registry.call('whoami', { session: 'cs_2' }, 'worker', { actor: 't', session_id: 'cs_1' })).rejects.toMatchObject({
      code: 'invalid_input',
      message: 'whoami: session: unknown field',
    });
  });

  it('Given a field that needs another, Then its schema says so (dependencies) and a call without the other is refused', async () => {
    const scoped = new ToolRegistry();
    scoped.register<ScopeArgs>({ name: 'scope', description: 'Sets a scope.', audience: 'main_brain', parameters: ScopeArgs, handler: (a) => a });
    expect(scoped.list('main_brain')[0].parameters).toMatchObject({ dependencies: { ids: ['mode'] } });
    expect(scoped.list('main_brain')[0].parameters.required).toBeUndefined();
    await expect(scoped.call('scope', { ids: ['a'] }, 'main_brain', { actor: 't' })).rejects.toMatchObject({ message: 'scope: ids: needs mode beside it' });
    expect(await scoped.call('scope', { ids: ['a'], mode: 'only' }, 'main_brain', { actor: 't' })).toEqual({ ids: ['a'], mode: 'only' });
  });

  it('hides tools from the other audience and refuses unknown tools', async () => {
    await expect(registry.call('whoami', {}, 'main_brain', { actor: 't' })).rejects.toMatchObject({ code: 'not_found' });
    await expect(registry.call('nope', {}, 'main_brain', { actor: 't' })).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('tool registry: the human gate', () => {
  const ran: string[] = [];
  const held: GatedCall[] = [];
  const registry = new ToolRegistry();
  registry.register<{ target: string }>({
    name: 'drop',
    description: 'Drops a target.',
    audience: 'main_brain',
    parameters: DropArgs,
    irreversible: (a) => (a.target === 'scratch' ? null : `Drop ${a.target} for good.`),
    unchanged: (a) => (a.target === 'missing' ? { refused: new DomainError('not_found', 'no target missing') } : a.target === 'dropped' ? { answer: { unchanged: 'dropped already' } } : null),
    handler: (a) => {
      ran.push(a.target);
      return { dropped: a.target };
    },
  });
  afterEach(() => {
    ran.length = 0;
    held.length = 0;
  });

  it('Given no gate keeper, When the brain makes a gated call, Then nothing runs and it is refused', async () => {
    await expect(registry.call('drop', { target: 'prod' }, 'main_brain', { actor: 'main_brain' })).rejects.toMatchObject({ code: 'permission_denied' });
    expect(ran).toEqual([]);
  });

  it('Given a gate keeper, When the brain makes a gated call, Then the keeper holds it (validated) and answers for it; an ungated call runs', async () => {
    registry.gateWith(async (call) => {
      held.push(call);
      return { status: 'waiting_for_user' };
    });
    expect(await registry.call('drop', { target: 'prod' }, 'main_brain', { actor: 'main_brain' })).toEqual({ status: 'waiting_for_user' });
    expect(held).toEqual([{ tool: 'drop', args: { target: 'prod' }, description: 'Drop prod for good.', actor: 'main_brain' }]);
    expect(await registry.call('drop', { target: 'scratch' }, 'main_brain', { actor: 'main_brain' })).toEqual({ dropped: 'scratch' });
    await expect(registry.call('drop', { target: '' }, 'main_brain', { actor: 'main_brain' })).rejects.toMatchObject({ code: 'invalid_input' });
    expect(ran).toEqual(['scratch']);
  });

  it('Given a gate keeper, When a gated call would change nothing, Then it is answered at once (its refusal, or its answer) and neither held nor run', async () => {
    registry.gateWith(async (call) => {
      held.push(call);
      return { status: 'waiting_for_user' };
    });
    await expect(registry.call('drop', { target: 'missing' }, 'main_brain', { actor: 'main_brain' })).rejects.toMatchObject({ code: 'not_found', message: 'no target missing' });
    expect(await registry.call('drop', { target: 'dropped' }, 'main_brain', { actor: 'main_brain' })).toEqual({ unchanged: 'dropped already' });
    expect([ran, held]).toEqual([[], []]);
  });

  it('When the user makes the call, or confirms a held one, Then it runs ungated', async () => {
    expect(await registry.call('drop', { target: 'prod' }, 'main_brain', { actor: 'user', human: true })).toEqual({ dropped: 'prod' });
    expect(await registry.runConfirmed('drop', { target: 'staging' })).toEqual({ dropped: 'staging' });
    await expect(registry.runConfirmed('drop', { target: 1 })).rejects.toMatchObject({ code: 'invalid_input' });
    expect([ran, held]).toEqual([['prod', 'staging'], []]);
  });
});
