import { ProfileDoc } from '../profile.schema';
import { emitClaudeCode } from './claude-code.emitter';
import { emitCodex } from './codex.emitter';
import { EmitContext, EmitResult, EmitRuntime, Emitter } from './emitter.types';
import { emitGeminiCli } from './gemini-cli.emitter';
import { emitOpencode } from './opencode.emitter';

export { EMIT_RUNTIMES, EmitContext, EmitResult, EmitRuntime, EmitWarning, EmittedFile, FileMerge, SkillFiles } from './emitter.types';
export { claudeFallbackModel, claudeHooks, claudeMcpServers, claudeModel, claudeSandbox, claudeSystemPrompt } from './claude-code.emitter';
export { blockEnd, blockStart, denyRules } from './emitter-support';
export { opencodeAgent } from './opencode.emitter';

const EMITTERS: Record<EmitRuntime, Emitter> = {
  'claude-code': emitClaudeCode,
  codex: emitCodex,
  'gemini-cli': emitGeminiCli,
  opencode: emitOpencode,
};

/** The files a runtime reads for this profile, and what it cannot express. Pure. */
export function emitProfile(runtime: EmitRuntime, profile: ProfileDoc, ctx: EmitContext): EmitResult {
  return EMITTERS[runtime](profile, ctx);
}
