import { isPlainObject } from '../../profiles/merge-patch';
import { ModelUsage } from '../../usage/usage.model';
import { RateLimitStatus } from '../session.events';

/**
 * What each runtime's stream says a turn used, read into Brainstem's four kinds of token (usage.model.ts). Values are
 * taken as the runtime wrote them: a report that is not numbers is caught (and dropped) where it is counted, never
 * patched up here. A missing count is 0.
 */

const count = (v: unknown): number => (v === undefined || v === null ? 0 : (v as number));
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

/** Usage worth a record: a turn that used nothing (an API error before any call) records none. */
const used = (u: ModelUsage): boolean => u.input_tokens !== 0 || u.output_tokens !== 0 || u.cache_read_tokens !== 0 || u.cache_write_tokens !== 0 || (u.cost_usd ?? 0) !== 0;

/**
 * claude's `result` (stream-json): `model_usage_since_last_result` has this turn's usage and cost per model (claude
 * 2.1.33x). Without it, `usage` is the turn's tokens and `total_cost_usd` the process's running cost, so the turn's cost
 * is what it grew by since the process's previous result (`costBefore`).
 */
export function claudeTurnUsage(result: Record<string, unknown>, model: string | null, costBefore: number): ModelUsage[] {
  const perModel = result.model_usage_since_last_result;
  if (isPlainObject(perModel)) {
    return Object.entries(perModel)
      .filter((entry): entry is [string, Record<string, unknown>] => isPlainObject(entry[1]))
      .map(([name, m]) => ({
        model: name,
        input_tokens: count(m.inputTokens),
        output_tokens: count(m.outputTokens),
        cache_read_tokens: count(m.cacheReadInputTokens),
        cache_write_tokens: count(m.cacheCreationInputTokens),
        cost_usd: m.costUSD === undefined ? null : (m.costUSD as number),
      }))
      .filter(used);
  }
  const u = result.usage;
  if (!isPlainObject(u)) return [];
  const total = result.total_cost_usd;
  const entry: ModelUsage = {
    model,
    input_tokens: count(u.input_tokens),
    output_tokens: count(u.output_tokens),
    cache_read_tokens: count(u.cache_read_input_tokens),
    cache_write_tokens: count(u.cache_creation_input_tokens),
    cost_usd: typeof total === 'number' ? total - costBefore : null,
  };
  return used(entry) ? [entry] : [];
}

/** claude's rate-limit state: a `rate_limit_event` (subscription accounts), with `resetsAt` in epoch seconds. */
export function claudeRateLimit(msg: Record<string, unknown>): { status: RateLimitStatus; resets_at: number | null; limit_type: string | null } | null {
  const info = msg.rate_limit_info;
  if (!isPlainObject(info) || (info.status !== 'allowed' && info.status !== 'allowed_warning' && info.status !== 'rejected')) return null;
  const resets = info.resetsAt;
  return {
    status: info.status,
    resets_at: typeof resets === 'number' && Number.isFinite(resets) && resets > 0 ? Math.round(resets * 1000) : null,
    limit_type: typeof info.rateLimitType === 'string' ? info.rateLimitType.slice(0, 100) : null,
  };
}

/** codex's `turn.completed` usage: its input counts the cached tokens, which are taken out. It says no model and no cost. */
export function codexTurnUsage(u: Record<string, unknown>, model: string | null): ModelUsage[] {
  const cached = count(u.cached_input_tokens);
  const entry: ModelUsage = {
    model,
    input_tokens: typeof u.input_tokens === 'number' ? u.input_tokens - num(cached) : count(u.input_tokens),
    output_tokens: count(u.output_tokens),
    cache_read_tokens: cached,
    cache_write_tokens: count(u.cache_write_input_tokens),
    cost_usd: null,
  };
  return used(entry) ? [entry] : [];
}

/**
 * gemini's `result` stats, per model: `input` is the prompt without its cached part, `cached` that part; the model's
 * thoughts are in `total_tokens` only, and are billed as output. No cost.
 */
export function geminiTurnUsage(stats: Record<string, unknown>, model: string | null): ModelUsage[] {
  const one = (name: string | null, s: Record<string, unknown>): ModelUsage => {
    const thoughts = Math.max(0, num(s.total_tokens) - num(s.input_tokens) - num(s.output_tokens));
    return {
      model: name,
      input_tokens: s.input !== undefined ? count(s.input) : num(s.input_tokens) - num(s.cached),
      output_tokens: typeof s.output_tokens === 'number' ? s.output_tokens + thoughts : count(s.output_tokens),
      cache_read_tokens: count(s.cached),
      cache_write_tokens: 0,
      cost_usd: null,
    };
  };
  const models = stats.models;
  const entries = isPlainObject(models)
    ? Object.entries(models).filter((e): e is [string, Record<string, unknown>] => isPlainObject(e[1])).map(([name, s]) => one(name, s))
    : [one(model, stats)];
  return entries.filter(used);
}

/** opencode's `step_finish`: one model call's tokens (reasoning apart from output) and its cost. It names no model. */
export function opencodeStepUsage(part: Record<string, unknown>, model: string | null): ModelUsage[] {
  const t = part.tokens;
  if (!isPlainObject(t)) return [];
  const cache = isPlainObject(t.cache) ? t.cache : {};
  const entry: ModelUsage = {
    model,
    input_tokens: count(t.input),
    output_tokens: typeof t.output === 'number' ? t.output + num(t.reasoning) : count(t.output),
    cache_read_tokens: count(cache.read),
    cache_write_tokens: count(cache.write),
    cost_usd: part.cost === undefined ? null : (part.cost as number),
  };
  return used(entry) ? [entry] : [];
}

/** The model a command line names (`-m x`, `--model x`, `--model=x`, codex's `-c model="x"`), or null. */
export function modelInArgs(args: readonly string[]): string | null {
  let found: string | null = null;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if ((a === '-m' || a === '--model') && i + 1 < args.length) found = args[++i];
    else if (a.startsWith('--model=')) found = a.slice('--model='.length);
    else if (a === '-c' && i + 1 < args.length && /^model\s*=/.test(args[i + 1])) found = args[++i].replace(/^model\s*=\s*/, '').replace(/^"(.*)"$/, '$1');
  }
  return found;
}

/** One turn's usage entries summed per model (opencode reports each model call; a turn may make many). */
export function mergeUsage(into: ModelUsage[], add: readonly ModelUsage[]): ModelUsage[] {
  const out = into.map((u) => ({ ...u }));
  for (const a of add) {
    const same = out.find((u) => u.model === a.model);
    if (!same) {
      out.push({ ...a });
      continue;
    }
    same.input_tokens += a.input_tokens;
    same.output_tokens += a.output_tokens;
    same.cache_read_tokens += a.cache_read_tokens;
    same.cache_write_tokens += a.cache_write_tokens;
    same.cost_usd = same.cost_usd === null || a.cost_usd === null ? null : same.cost_usd + a.cost_usd;
  }
  return out;
}
