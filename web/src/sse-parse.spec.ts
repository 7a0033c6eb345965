import { parseSse } from './sse-parse';

describe('parseSse', () => {
  it('Given a stream cut anywhere, When its pieces are parsed in turn, Then the same messages come out whole', () => {
    const stream = ': live events after this seq\nid: 7\n\nid: 8\nevent: session.created\ndata: {"seq":8}\n\r\nevent: chat.delta\r\ndata: line one\r\ndata: line two\r\n\r\n: a comment alone\n\n';
    const expected = [{ id: '7', data: '' }, { id: '8', event: 'session.created', data: '{"seq":8}' }, { event: 'chat.delta', data: 'line one\nline two' }];
    for (let cut = 0; cut <= stream.length; cut++) {
      const first = parseSse(stream.slice(0, cut));
      const second = parseSse(first.rest + stream.slice(cut));
      expect({ cut, messages: [...first.messages, ...second.messages], rest: second.rest }).toEqual({ cut, messages: expected, rest: '' });
    }
  });

  it('Given a comment alone, When parsed, Then it is no message (a keep-alive)', () => {
    expect(parseSse(': ping\n\n')).toEqual({ messages: [], rest: '' });
  });

  it('Given a value with colons, When parsed, Then only the first colon separates the field', () => {
    expect(parseSse('data: a: b:c\n\n').messages).toEqual([{ data: 'a: b:c' }]);
  });
});
