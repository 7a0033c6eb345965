import { jsonMergePatch, mergePatch } from './merge-patch';

describe('merge patches', () => {
  it('Given a JSON merge patch with nulls, When applied, Then those keys are removed, objects merge and arrays replace', () => {
    const base = { tools: { builtin: ['Read'], mcp_servers: { gh: { type: 'stdio' }, docs: { type: 'http' } } }, hooks: { PreToolUse: [1] }, name: 'x' };
    expect(jsonMergePatch(base, { tools: { builtin: ['Edit'], mcp_servers: { gh: null } }, hooks: null })).toEqual({ tools: { builtin: ['Edit'], mcp_servers: { docs: { type: 'http' } } }, name: 'x' });
    expect(base.tools.mcp_servers.gh).toEqual({ type: 'stdio' });
  });

  it('Given a null for a key that is not there, When applied, Then nothing is added', () => {
    expect(jsonMergePatch({ a: 1 }, { b: null, c: { d: null } })).toEqual({ a: 1, c: {} });
  });

  it('Given the plain merge (apply plans), When a patch holds null, Then the null is kept as a value', () => {
    expect(mergePatch({ a: 1 }, { a: null })).toEqual({ a: null });
  });
});
