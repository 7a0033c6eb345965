/**
 * How a runtime's own sandbox fits Brainstem's. Pure.
 *
 * Brainstem's sandbox (srt, on bubblewrap) refuses new user namespaces inside it, so a runtime that sandboxes its own
 * commands with bubblewrap cannot nest there: codex 0.171's every command then fails with "bwrap: Creating new
 * namespace failed: nesting depth or /proc/sys/user/max_*_namespaces exceeded (ENOSPC)". Inside Brainstem's sandbox
 * the runtime's own is turned off; Brainstem's contains the whole worker, its commands included. Outside it (an
 * unsandboxed worker, the main brain) the runtime's own sandbox stays as its configuration says.
 *
 * - codex: `--sandbox danger-full-access`, which wins over the profile's `sandbox_mode` in either order.
 * - claude-code: its sandbox is off unless its settings turn it on; those settings are the profile's emitted file.
 * - gemini-cli: its sandbox (docker or podman) is off unless asked for; opencode and command have none.
 */
const WHEN_SANDBOXED: Readonly<Record<string, readonly string[]>> = {
  codex: ['--sandbox', 'danger-full-access'],
};

/** The flags that turn `runtime`'s own sandbox off when the worker runs in Brainstem's; none otherwise. */
export function ownSandboxArgs(runtime: string, sandboxed: boolean): string[] {
  return sandboxed ? [...(WHEN_SANDBOXED[runtime] ?? [])] : [];
}
