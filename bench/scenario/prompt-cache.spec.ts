import { MIN_CACHEABLE_TOKENS, PromptCache, dollarsOf, estimateTokens, promptBlocks } from './prompt-cache';

/** A text block of about `tokens` tokens (its JSON is what is counted). */
const text = (tokens: number, fill = 'a', cache = false) => ({ type: 'text', text: fill.repeat(tokens * 4 - 26), ...(cache ? { cache_control: { type: 'ephemeral' } } : {}) });
const MIN = MIN_CACHEABLE_TOKENS;

describe('prompt caching as the fake model API counts it', () => {
  describe('given a request with no cache_control', () => {
    it('when counted twice, then every token is fresh input both times', () => {
      const cache = new PromptCache();
      const request = { system: 'x'.repeat(8000), messages: [{ role: 'user', content: 'hello' }] };
      const total = promptBlocks(request).pop()!.tokens;
      expect(cache.account(request, 0)).toEqual({ input_tokens: total, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
      expect(cache.account(request, 1000)).toEqual({ input_tokens: total, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
    });
  });

  describe('given a system prompt marked as a breakpoint', () => {
    const system = [text(2 * MIN, 's', true)];
    const first = { system, messages: [{ role: 'user', content: [text(100, 'u')] }] };
    const second = { system, messages: [{ role: 'user', content: [text(100, 'v')] }] };

    it('when the first request comes, then the system is written and the message is fresh; when the next comes, the system is read', () => {
      const cache = new PromptCache();
      expect(cache.account(first, 0)).toEqual({ input_tokens: 100, cache_creation_input_tokens: 2 * MIN, cache_read_input_tokens: 0 });
      expect(cache.account(second, 1000)).toEqual({ input_tokens: 100, cache_creation_input_tokens: 0, cache_read_input_tokens: 2 * MIN });
    });

    it('when the next comes after five minutes without a read, then it is written again', () => {
      const cache = new PromptCache();
      cache.account(first, 0);
      expect(cache.account(second, 4 * 60_000).cache_read_input_tokens).toBe(2 * MIN);
      // The read refreshed it: alive until 9 minutes.
      expect(cache.account(second, 8 * 60_000).cache_read_input_tokens).toBe(2 * MIN);
      expect(cache.account(second, 14 * 60_000)).toEqual({ input_tokens: 100, cache_creation_input_tokens: 2 * MIN, cache_read_input_tokens: 0 });
    });

    it('when the system changes by one character, then nothing is read', () => {
      const cache = new PromptCache();
      cache.account(first, 0);
      const changed = { ...first, system: [text(2 * MIN, 't', true)] };
      expect(cache.account(changed, 1000).cache_read_input_tokens).toBe(0);
    });
  });

  describe('given a breakpoint on a prefix shorter than the minimum', () => {
    it('when counted twice, then it is never cached', () => {
      const cache = new PromptCache();
      const request = { system: [text(MIN - 10, 's', true)], messages: [{ role: 'user', content: 'hi' }] };
      cache.account(request, 0);
      expect(cache.account(request, 1).cache_read_input_tokens).toBe(0);
    });
  });

  describe('given a conversation that grows with a breakpoint on its last message, as claude sends it', () => {
    it('when each turn adds a message, then the turn before is read and only the new tail is written', () => {
      const cache = new PromptCache();
      const system = [text(2 * MIN, 's', true)];
      const turn1 = [{ role: 'user', content: [text(300, '1', true)] }];
      const turn2 = [{ role: 'user', content: [text(300, '1')] }, { role: 'assistant', content: [text(50, 'a')] }, { role: 'user', content: [text(200, '2', true)] }];
      expect(cache.account({ system, messages: turn1 }, 0)).toEqual({ input_tokens: 0, cache_creation_input_tokens: 2 * MIN + 300, cache_read_input_tokens: 0 });
      expect(cache.account({ system, messages: turn2 }, 10)).toEqual({ input_tokens: 0, cache_creation_input_tokens: 250, cache_read_input_tokens: 2 * MIN + 300 });
    });

    it('when the cached prefix lies more than 20 blocks before the breakpoint, then only the system is found', () => {
      const cache = new PromptCache();
      const system = [text(2 * MIN, 's', true)];
      const head = { role: 'user', content: [text(10, 'h', true)] };
      cache.account({ system, messages: [head] }, 0);
      const many = Array.from({ length: 25 }, (_, i) => ({ role: i % 2 ? 'user' : 'assistant', content: [text(10, String(i % 10))] }));
      const later = { system, messages: [{ role: 'user', content: [text(10, 'h')] }, ...many, { role: 'user', content: [text(10, 'z', true)] }] };
      expect(cache.account(later, 10).cache_read_input_tokens).toBe(2 * MIN);
    });
  });

  describe('given tools, system and messages', () => {
    it('when blocks are laid out, then tools come first, then the system, then the messages, and cache_control does not change a block', () => {
      const plain = promptBlocks({ tools: [{ name: 't' }], system: 's', messages: [{ role: 'user', content: 'm' }] });
      const marked = promptBlocks({ tools: [{ name: 't', cache_control: { type: 'ephemeral' } }], system: 's', messages: [{ role: 'user', content: 'm' }] });
      expect(plain.map((b) => b.prefix)).toEqual(marked.map((b) => b.prefix));
      expect(plain.map((b) => b.tokens)).toEqual([estimateTokens('{"name":"t"}'), estimateTokens('{"name":"t"}') + estimateTokens('{"type":"text","text":"s"}'), expect.any(Number)]);
      expect(marked.map((b) => b.breakpoint)).toEqual(['5m', null, null]);
    });

    it('when more than four blocks are marked, then only the first four are breakpoints', () => {
      const blocks = promptBlocks({ system: Array.from({ length: 6 }, () => text(10, 'x', true)), messages: [] });
      expect(blocks.filter((b) => b.breakpoint !== null)).toHaveLength(4);
    });
  });

  describe('given a usage', () => {
    it('when priced, then each kind of token takes its own list price', () => {
      const usage = { input_tokens: 1e6, cache_creation_input_tokens: 1e6, cache_read_input_tokens: 1e6, output_tokens: 1e6 };
      expect(dollarsOf('claude-sonnet-4-5', usage)).toBeCloseTo(3 + 3.75 + 0.3 + 15);
      expect(dollarsOf('claude-opus-4-1', usage)).toBeCloseTo(15 + 18.75 + 1.5 + 75);
    });
  });
});
