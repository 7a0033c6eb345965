import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { EMIT_RUNTIMES, emitProfile } from '../../src/profiles/emitters';
import { parseProfileDocument } from '../../src/profiles/profile.schema';
import { tempDir } from '../support/temp-dir';
import { useTestApp } from '../support/use-test-app';
import { call, httpClient } from './mcp-client';

/** The scan fixtures: a realistic profile applied with each emitter (source: test/fixtures/scan/billing-service/profile.yaml). */
const FIXTURE = join(__dirname, '../fixtures/scan/billing-service');
/** The service URL the fixtures were emitted with; only the reserved brainstem entry carries it. */
const FIXTURE_URL = 'http://127.0.0.1:4820';

function filesUnder(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out[relative(dir, join(e.parentPath, e.name)).split('\\').join('/')] = readFileSync(join(e.parentPath, e.name), 'utf8');
  }
  return out;
}

/** manage_agent_profile scan over MCP: a fixture project → the profile → re-emitted files equal to the fixture's. */
describe('manage_agent_profile scan over MCP', () => {
  let brain: Client;
  const t = useTestApp({}, { listen: true, each: true, beforeClose: () => brain.close() });
  beforeEach(async () => {
    brain = await httpClient(t.url, { token: t.tokenOf('main_brain') });
  });

  const profileTool = (args: Record<string, unknown>) => call(brain, 'manage_agent_profile', args);

  describe.each(EMIT_RUNTIMES.map((r) => [r]))('%s fixture', (runtime) => {
    const project = join(FIXTURE, runtime);
    const fixture = filesUnder(project);

    it('proposes the profile whose re-emitted files match the fixture byte for byte', async () => {
      const scanned = await profileTool({ action: 'scan', dir: project });
      expect(scanned.isError).toBe(false);
      expect(scanned.json).toMatchObject({ saved: false, runtime, profile_id: 'billing-service', warnings: [] });
      expect([...scanned.json.files_read].sort()).toEqual(Object.keys(fixture).sort());
      expect(scanned.json.profile).toMatchObject({ name: 'Billing Service', target_runtime: runtime });
      // Nothing saved by a plain scan.
      expect((await profileTool({ action: 'read', profile_id: 'billing-service' })).isError).toBe(true);

      const { target_runtime, ...rest } = scanned.json.profile;
      const parsed = parseProfileDocument({ ...rest, runtime: target_runtime });
      if (!parsed.ok) throw new Error(parsed.errors.join('; '));
      const emitted = emitProfile(runtime, parsed.doc, { profileId: scanned.json.profile_id, serviceUrl: FIXTURE_URL, skills: [] });
      expect(Object.fromEntries(emitted.files.map((f) => [f.path, f.content]))).toEqual(fixture);
    });

    it('import:true of this profile, which runs commands, is the user\'s: the brain waits for the user; saved and applied over REST it writes the fixture files again', async () => {
      // The fixture has an MCP server started by a command (and, but for opencode, command hooks): the brain may not import it alone
      const imported = await profileTool({ action: 'scan', dir: project, runtime, import: true });
      expect(imported).toMatchObject({ isError: false, json: { status: 'waiting_for_user', what: expect.stringContaining('profile.tools.mcp_servers.postgres: add or change an MCP server that starts a command (runs ') } });
      expect((await profileTool({ action: 'read', profile_id: 'billing-service' })).isError).toBe(true);
      // The user saves the proposal as it is and applies it
      const { profile } = (await profileTool({ action: 'scan', dir: project, runtime })).json;
      const saved = await t.inject({ method: 'POST', url: '/api/v1/agent-profiles', payload: profile });
      expect(saved.json()).toMatchObject({ id: 'billing-service', name: 'Billing Service' });
      const out = tempDir('brainstem-scan-apply-');
      try {
        const applied = await t.inject({ method: 'POST', url: '/api/v1/agent-profiles/billing-service/apply', payload: { dir: out.path, runtime } });
        expect(applied.statusCode).toBe(200);
        const written = filesUnder(out.path);
        for (const [path, content] of Object.entries(fixture)) {
          // The running service's own URL is the one difference: it names the reserved brainstem server.
          expect(written[path]?.split(t.url).join(FIXTURE_URL)).toBe(content);
        }
      } finally {
        out.remove();
      }
    });
  });

  it('import:true saves a scanned profile that runs nothing, under a fresh name and id when taken, and the brain may apply it', async () => {
    // Given a project the built-in researcher profile was applied to
    const project = tempDir('brainstem-scan-safe-');
    const out = tempDir('brainstem-scan-safe-apply-');
    try {
      expect((await t.inject({ method: 'POST', url: '/api/v1/agent-profiles/researcher/apply', payload: { dir: project.path, runtime: 'claude-code' } })).statusCode).toBe(200);
      // When the brain scans and imports it (the name is the built-in's); Then it is saved under a fresh name and id
      const imported = await profileTool({ action: 'scan', dir: project.path, runtime: 'claude-code', import: true });
      expect(imported.json).toMatchObject({ saved: true, runtime: 'claude-code', profile_id: 'researcher-2', profile: { id: 'researcher-2', name: 'Researcher (2)', source: 'import' }, lint: { valid: true } });
      expect(imported.json.import_warnings).toEqual([expect.objectContaining({ code: 'renamed' })]);
      // And the brain may apply it
      expect((await profileTool({ action: 'apply', profile_id: 'researcher-2', dir: out.path, runtime: 'claude-code' })).isError).toBe(false);
      // And a second import gets the next name and id
      expect((await profileTool({ action: 'scan', dir: project.path, import: true })).json).toMatchObject({ saved: true, profile_id: 'researcher-3', profile: { name: 'Researcher (3)' } });
    } finally {
      project.remove();
      out.remove();
    }
  });

  it('refuses a missing dir, a file, a relative path, a project without the runtime\'s files and fields scan does not use, readably', async () => {
    const tmp = tempDir('brainstem-scan-bad-');
    try {
      writeFileSync(join(tmp.path, 'file.txt'), 'x');
      expect(await profileTool({ action: 'scan', dir: join(tmp.path, 'nope') })).toMatchObject({ isError: true, text: expect.stringMatching(/^dir_unusable: dir: .* does not exist/) });
      expect(await profileTool({ action: 'scan', dir: join(tmp.path, 'file.txt') })).toMatchObject({ isError: true, text: expect.stringContaining('is not a directory') });
      expect(await profileTool({ action: 'scan', dir: 'relative/dir' })).toMatchObject({ isError: true, text: expect.stringContaining('must be an absolute path') });
      expect(await profileTool({ action: 'scan', dir: tmp.path })).toMatchObject({ isError: true, text: expect.stringContaining('scan_found_nothing: scan: no runtime files found') });
      expect(await profileTool({ action: 'scan', dir: tmp.path, runtime: 'gemini-cli' })).toMatchObject({ isError: true, text: expect.stringContaining('no gemini-cli files') });
      expect(await profileTool({ action: 'scan' })).toMatchObject({ isError: true, text: expect.stringContaining('dir: is required for action scan') });
      expect(await profileTool({ action: 'scan', dir: tmp.path, force: true })).toMatchObject({ isError: true, text: expect.stringContaining('force: not used by action scan') });
      expect(await profileTool({ action: 'apply', profile_id: 'researcher', import: true })).toMatchObject({ isError: true, text: expect.stringContaining('import: not used by action apply') });
    } finally {
      tmp.remove();
    }
  });
});
