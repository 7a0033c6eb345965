import { createHash } from 'node:crypto';

/**
 * What a Messages API request costs in input tokens under Anthropic's prompt caching, as the fake model API counts it
 * (https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching):
 * - The prompt is one sequence of blocks in the order tools, system, messages; each tool, system block and message
 *   content block is one block (a string system or content is one text block).
 * - A block with `cache_control` is a breakpoint: the prefix up to and including it is written to the cache, if it is
 *   at least MIN_CACHEABLE_TOKENS long. At most MAX_BREAKPOINTS count (the API refuses more; later ones are ignored here).
 * - A request reads from the cache the longest prefix that was written before and is still alive, found at a block
 *   boundary at most LOOKBACK_BLOCKS before one of its breakpoints (the API's automatic prefix check). Only an exact
 *   prefix matches: any change to a block invalidates everything after it.
 * - A cache entry lives 5 minutes (`ttl: "1h"`: an hour) from when it was last written or read.
 * - input_tokens is what is neither read from nor written to the cache; cache_creation_input_tokens what was written
 *   past what was read; cache_read_input_tokens what was read.
 * Tokens are estimated as UTF-8 bytes / 4, rounded up, of each block's JSON (cache_control left out): no tokenizer is
 * at hand, and the ratios the bench reports (fresh vs cached, one prompt vs another) depend little on the divisor.
 */
export const MIN_CACHEABLE_TOKENS = 1024;
export const MAX_BREAKPOINTS = 4;
export const LOOKBACK_BLOCKS = 20;
const TTL_MS: Record<string, number> = { '5m': 5 * 60_000, '1h': 60 * 60_000 };

export interface CachedRequest {
  tools?: unknown[];
  system?: unknown;
  messages: unknown[];
}

export interface CacheUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

/** Bytes of UTF-8 / 4, rounded up: the estimate used throughout the bench. */
export const estimateTokens = (text: string): number => Math.ceil(Buffer.byteLength(text, 'utf8') / 4);

interface Block {
  /** The prefix up to and including this block, as a digest. */
  prefix: string;
  /** Tokens of the prefix up to and including this block. */
  tokens: number;
  /** The TTL of the breakpoint this block is, else null. */
  breakpoint: string | null;
}

type Json = Record<string, unknown>;

function withoutCacheControl(block: unknown): { body: unknown; ttl: string | null } {
  if (typeof block !== 'object' || block === null || Array.isArray(block)) return { body: block, ttl: null };
  const { cache_control, ...rest } = block as Json;
  if (cache_control === undefined) return { body: block, ttl: null };
  const ttl = (cache_control as { ttl?: unknown }).ttl;
  return { body: rest, ttl: typeof ttl === 'string' && ttl in TTL_MS ? ttl : '5m' };
}

/** The request as the sequence of blocks the cache sees, each with its prefix digest and running token count. */
export function promptBlocks(request: CachedRequest): Block[] {
  const raw: Array<{ where: string; block: unknown }> = [];
  for (const tool of request.tools ?? []) raw.push({ where: 'tool', block: tool });
  const system = request.system;
  if (typeof system === 'string') raw.push({ where: 'system', block: { type: 'text', text: system } });
  else if (Array.isArray(system)) for (const b of system) raw.push({ where: 'system', block: b });
  for (const m of request.messages as Array<{ role?: string; content?: unknown }>) {
    const where = `message:${m.role ?? '?'}`;
    if (typeof m.content === 'string') raw.push({ where, block: { type: 'text', text: m.content } });
    else if (Array.isArray(m.content)) for (const b of m.content) raw.push({ where, block: b });
  }
  let digest = '';
  let tokens = 0;
  let breakpoints = 0;
  return raw.map(({ where, block }) => {
    const { body, ttl } = withoutCacheControl(block);
    const text = JSON.stringify(body);
    digest = createHash('sha256').update(digest).update(where).update('\0').update(text).digest('hex');
    tokens += estimateTokens(text);
    const counts = ttl !== null && breakpoints < MAX_BREAKPOINTS;
    if (counts) breakpoints++;
    return { prefix: digest, tokens, breakpoint: counts ? ttl : null };
  });
}

/** The cache of one API key: prefixes written, each alive until its expiry (epoch ms). */
export class PromptCache {
  private readonly entries = new Map<string, { tokens: number; expires_at: number; ttl_ms: number }>();

  /** Counts one request arriving at `at` (epoch ms), and writes and refreshes what it caches. */
  account(request: CachedRequest, at: number): CacheUsage {
    const blocks = promptBlocks(request);
    const total = blocks.length ? blocks[blocks.length - 1].tokens : 0;
    const alive = (b: Block) => {
      const e = this.entries.get(b.prefix);
      return e !== undefined && e.expires_at > at;
    };
    let readAt = -1;
    blocks.forEach((b, i) => {
      if (b.breakpoint === null) return;
      for (let j = i; j >= Math.max(0, i - LOOKBACK_BLOCKS); j--) {
        if (alive(blocks[j])) {
          readAt = Math.max(readAt, j);
          break;
        }
      }
    });
    const read = readAt >= 0 ? blocks[readAt].tokens : 0;
    if (readAt >= 0) {
      const e = this.entries.get(blocks[readAt].prefix)!;
      e.expires_at = at + e.ttl_ms;
    }
    let written = read;
    for (const b of blocks) {
      if (b.breakpoint === null || b.tokens < MIN_CACHEABLE_TOKENS) continue;
      const ttl_ms = TTL_MS[b.breakpoint];
      this.entries.set(b.prefix, { tokens: b.tokens, expires_at: at + ttl_ms, ttl_ms });
      written = Math.max(written, b.tokens);
    }
    return { input_tokens: total - written, cache_creation_input_tokens: written - read, cache_read_input_tokens: read };
  }
}

/** Dollars per million tokens, list prices of the model family the request names (Sonnet's when none matches). */
export interface TokenPrices {
  input: number;
  cache_write: number;
  cache_read: number;
  output: number;
}

const PRICES: Array<[RegExp, TokenPrices]> = [
  [/opus-(4-[5-9]|[5-9])/, { input: 5, cache_write: 6.25, cache_read: 0.5, output: 25 }],
  [/opus/, { input: 15, cache_write: 18.75, cache_read: 1.5, output: 75 }],
  [/haiku-4/, { input: 1, cache_write: 1.25, cache_read: 0.1, output: 5 }],
  [/haiku/, { input: 0.8, cache_write: 1, cache_read: 0.08, output: 4 }],
];
const SONNET: TokenPrices = { input: 3, cache_write: 3.75, cache_read: 0.3, output: 15 };

export const pricesOf = (model: string): TokenPrices => PRICES.find(([re]) => re.test(model))?.[1] ?? SONNET;

/** What one request costs, in dollars, at its model's list prices (5-minute cache writes). */
export function dollarsOf(model: string, usage: CacheUsage & { output_tokens: number }): number {
  const p = pricesOf(model);
  return (usage.input_tokens * p.input + usage.cache_creation_input_tokens * p.cache_write + usage.cache_read_input_tokens * p.cache_read + usage.output_tokens * p.output) / 1e6;
}
