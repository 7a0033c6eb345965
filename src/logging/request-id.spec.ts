import { requestIdFrom } from './request-id';

describe('requestIdFrom', () => {
  const fresh = () => 'fresh-id';

  it('keeps a caller id made of letters, digits and . _ : -', () => {
    // Given an incoming X-Request-Id such as proxies and tracers send
    // When the request id is chosen / Then it is kept
    expect(requestIdFrom('3f2a9c1e-7b4d-4e0a-9a51-6d2f1b8c0e77', fresh)).toBe('3f2a9c1e-7b4d-4e0a-9a51-6d2f1b8c0e77');
    expect(requestIdFrom('edge:req_42.a', fresh)).toBe('edge:req_42.a');
  });

  it('replaces a missing, repeated, empty, over-long or free-text header by a fresh id', () => {
    for (const header of [undefined, ['a', 'b'], '', 'x'.repeat(129), 'a b', 'id\nforged log line', '{"json":1}', 'é']) {
      expect(requestIdFrom(header, fresh)).toBe('fresh-id');
    }
    expect(requestIdFrom('x'.repeat(128), fresh)).toBe('x'.repeat(128));
  });
});
