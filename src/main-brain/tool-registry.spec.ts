import { ToolRegistry } from './tool-registry';

describe('tool registry', () => {
  const registry = new ToolRegistry();
  registry.register<{ text: string; times?: number }>({
    name: 'echo',
    description: 'Repeats text.',
    audience: 'main_brain',
    parameters: {
      type: 'object',
      properties: { text: { type: 'string', minLength: 1 }, times: { type: 'integer', minimum: 1, maximum: 3 } },
      required: ['text'],
      additionalProperties: false,
    },
    handler: ({ text, times = 1 }) => text.repeat(times),
  });
  registry.register({
    name: 'whoami',
    description: 'The calling session.',
    audience: 'worker',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    handler: (_args, ctx) => ctx.session_id,
  });

  it('lists tools per audience with their schemas', () => {
    expect(registry.list('main_brain').map((t) => t.name)).toEqual(['echo']);
    expect(registry.list('worker')).toEqual([{ name: 'whoami', description: 'The calling session.', parameters: expect.objectContaining({ type: 'object' }) }]);
  });

  it('calls a tool with valid arguments', async () => {
    expect(await registry.call('echo', { text: 'ab', times: 2 }, 'main_brain', { actor: 't' })).toBe('abab');
    expect(await registry.call('whoami', undefined, 'worker', { actor: 't', session_id: 'cs_1' })).toBe('cs_1');
  });

  it('answers bad arguments with a structured error naming each problem', async () => {
    await expect(registry.call('echo', { times: 9, extra: 1 }, 'main_brain', { actor: 't' })).rejects.toMatchObject({
      code: 'invalid_input',
      message: 'echo: text: is required; extra: unknown field; times: must be <= 3',
    });
    await expect(registry.call('echo', 'nope', 'main_brain', { actor: 't' })).rejects.toMatchObject({ code: 'invalid_input' });
  });

  it('hides tools from the other audience and refuses unknown tools', async () => {
    await expect(registry.call('whoami', {}, 'main_brain', { actor: 't' })).rejects.toMatchObject({ code: 'not_found' });
    await expect(registry.call('nope', {}, 'main_brain', { actor: 't' })).rejects.toMatchObject({ code: 'not_found' });
  });
});
