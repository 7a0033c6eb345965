import { dump } from 'js-yaml';
import { RESERVED_MCP_SERVER } from '../profile.lint';
import { McpServer, ProfileDoc } from '../profile.schema';
import { EmitContext, EmitWarning, EmitWarningCode } from './emitter.types';
import { SESSION_ENV, TOKEN_ENV } from '../../common/worker-env';

/** Helpers the emitters share. Pure. */

export const SESSION_HEADER = 'X-Brainstem-Session';
export { RESERVED_MCP_SERVER };
export { SESSION_ENV, TOKEN_ENV } from '../../common/worker-env';

export function brainstemMcpUrl(ctx: EmitContext): string {
  return `${ctx.serviceUrl.replace(/\/+$/, '')}/mcp`;
}

/**
 * The reserved server's headers: the worker's credential (which alone decides who it is) and the session as a
 * hint, both as references to the worker's environment in the runtime's own syntax (`ref`), never values.
 */
export function brainstemHeaders(ref: (envVar: string) => string): Record<string, string> {
  return { [SESSION_HEADER]: ref(SESSION_ENV), Authorization: `Bearer ${ref(TOKEN_ENV)}` };
}

/** The profile's own MCP servers, without the reserved name (a profile using it is refused by lint before apply). */
export function profileMcpServers(profile: ProfileDoc): Array<[string, McpServer]> {
  return Object.entries(profile.tools.mcp_servers ?? {}).filter(([name]) => name.trim().toLowerCase() !== RESERVED_MCP_SERVER);
}

export function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** A Markdown file with YAML frontmatter (keys whose value is undefined are left out). */
export function markdown(frontmatter: Record<string, unknown>, body: string): string {
  const fields = Object.fromEntries(Object.entries(frontmatter).filter(([, v]) => v !== undefined));
  const head = dump(fields, { lineWidth: -1, noRefs: true });
  return `---\n${head}---\n${body.endsWith('\n') || body === '' ? body : `${body}\n`}`;
}

export function uniq(values: readonly string[]): string[] {
  return [...new Set(values)];
}

/** Denied tools/rules: `permissions.deny` merged with `tools.deny`. */
export function denyRules(profile: ProfileDoc): string[] {
  return uniq([...profile.permissions.deny, ...(profile.tools.deny ?? [])]);
}

/** Reasoning effort from `model.options` (`reasoning_effort` wins over `effort`). */
export function reasoningEffort(profile: ProfileDoc): string | undefined {
  const options = profile.model.options ?? {};
  const value = options.reasoning_effort ?? options.effort;
  return typeof value === 'string' ? value : undefined;
}

export class Warnings {
  readonly list: EmitWarning[] = [];
  add(code: EmitWarningCode, message: string): void {
    this.list.push({ code, message });
  }
}

/** Warnings common to the runtimes with a generic mapping. */
export function warnCommonGaps(runtime: string, profile: ProfileDoc, warnings: Warnings): void {
  if (profile.model.fallback?.length) warnings.add('fallback_ignored', `${runtime} has no fallback model setting; model.fallback is ignored`);
  profile.skills.forEach((s) => warnings.add('skill_not_injected', `${runtime}: skill ${s.name} is not injected (skills are copied for claude-code only)`));
}

/** The instructions as one Markdown text: system prompt, referenced files, path rules. */
export function instructionsMarkdown(profile: ProfileDoc): string {
  const parts: string[] = [];
  const prompt = profile.instructions.system_prompt?.trim();
  if (prompt) parts.push(prompt);
  const files = profile.instructions.files ?? [];
  if (files.length) parts.push(['Also read these files:', ...files.map((f) => `- ${f}`)].join('\n'));
  const rules = profile.instructions.rules ?? [];
  if (rules.length) parts.push(['## Path rules', ...rules.map((r) => `- When working on files matching \`${r.glob}\`: ${r.instruction}`)].join('\n'));
  return parts.join('\n\n');
}

/** A marked block inside a shared Markdown file; apply replaces the block and keeps the rest of the file. */
export function profileBlock(profileId: string, body: string): string {
  return `${blockStart(profileId)}\n${body}\n${blockEnd(profileId)}\n`;
}

export const blockStart = (profileId: string) => `<!-- brainstem:profile ${profileId} begin -->`;
export const blockEnd = (profileId: string) => `<!-- brainstem:profile ${profileId} end -->`;
