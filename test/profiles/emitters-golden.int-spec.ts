import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { load } from 'js-yaml';
import { parse as parseToml } from 'smol-toml';
import { EMIT_RUNTIMES, EmitResult, emitProfile } from '../../src/profiles/emitters';
import { BUILTIN_TEMPLATES } from '../../src/profiles/templates';

/**
 * Golden files: every built-in template through every emitter, compared with checked-in outputs under
 * test/fixtures/golden/<runtime>/<template>/. Regenerate with UPDATE_GOLDEN=1 (then review the diff by eye).
 */
const GOLDEN = join(__dirname, '../fixtures/golden');
const UPDATE = process.env.UPDATE_GOLDEN === '1';
const CTX = { serviceUrl: 'http://127.0.0.1:4820', skills: [] };
const WARNINGS_FILE = 'warnings.json';

function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

function expected(result: EmitResult): Map<string, string> {
  const files = new Map(result.files.map((f) => [f.path, f.content]));
  files.set(WARNINGS_FILE, `${JSON.stringify(result.warnings, null, 2)}\n`);
  return files;
}

function frontmatter(text: string): Record<string, unknown> {
  const match = /^---\n([\s\S]*?)\n---\n/.exec(text);
  if (!match) throw new Error('no frontmatter');
  return load(match[1]) as Record<string, unknown>;
}

describe.each(EMIT_RUNTIMES.map((r) => [r]))('golden files: %s', (runtime) => {
  describe.each(BUILTIN_TEMPLATES.map((t) => [t.id, t]))('%s', (id, template) => {
    const dir = join(GOLDEN, runtime, id);
    const result = emitProfile(runtime, template.doc, { ...CTX, profileId: id });
    const files = expected(result);

    if (UPDATE) {
      for (const [path, content] of files) {
        mkdirSync(dirname(join(dir, path)), { recursive: true });
        writeFileSync(join(dir, path), content);
      }
    }

    it('matches the checked-in outputs, file for file', () => {
      // Given the template; When emitted; Then the same files with the same content as the golden directory
      expect(listFiles(dir)).toEqual([...files.keys()].sort());
      for (const [path, content] of files) expect(content).toBe(readFileSync(join(dir, path), 'utf8'));
    });

    it('reads back with the format parsers', () => {
      for (const file of result.files) {
        if (file.path.endsWith('.json')) expect(() => JSON.parse(file.content)).not.toThrow();
        if (file.path.endsWith('.toml')) expect(() => parseToml(file.content)).not.toThrow();
        if (file.path.endsWith('.md') && file.content.startsWith('---\n')) expect(frontmatter(file.content)).toEqual(expect.any(Object));
      }
    });

    if (runtime === 'claude-code') {
      it('writes an agent file claude-code will load (name and description present)', () => {
        const agent = result.files.find((f) => f.path === `.claude/agents/${id}.md`)!;
        const fm = frontmatter(agent.content);
        expect(fm.name).toBe(id);
        expect(String(fm.description).length).toBeGreaterThan(0);
        expect(fm.permissionMode).toBe(template.doc.permissions.mode);
        expect(JSON.parse(result.files.find((f) => f.path === '.mcp.json')!.content).mcpServers.brainstem).toEqual({
          type: 'http',
          url: 'http://127.0.0.1:4820/mcp',
          headers: { 'X-Brainstem-Session': '${BRAINSTEM_SESSION_ID:-}', Authorization: 'Bearer ${BRAINSTEM_TOKEN:-}' },
        });
      });
    }

    if (runtime === 'codex') {
      it('config.toml carries the mode and the reserved server, whose tools codex calls without asking', () => {
        const config = parseToml(result.files.find((f) => f.path === '.codex/config.toml')!.content) as { approval_policy: string; mcp_servers: Record<string, unknown> };
        expect(['on-request', 'never']).toContain(config.approval_policy);
        expect(config.mcp_servers.brainstem).toEqual({
          url: 'http://127.0.0.1:4820/mcp',
          bearer_token_env_var: 'BRAINSTEM_TOKEN',
          env_http_headers: { 'X-Brainstem-Session': 'BRAINSTEM_SESSION_ID' },
          default_tools_approval_mode: 'approve',
        });
      });
    }
  });
});
