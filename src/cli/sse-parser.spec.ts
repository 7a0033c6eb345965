import { SseParser } from './sse-parser';

describe('the SSE parser', () => {
  it('given a stream cut anywhere, gives the same messages as given it whole: ids, events, multi-line data, no comments', () => {
    const stream = ': live events after this seq\nid: 7\n\nid: 8\nevent: session.created\ndata: {"seq":8}\n\r\nevent: chat.delta\r\ndata: line one\r\ndata: line two\r\n\r\n: a comment alone\n\n';
    const expected = [{ id: '7', data: '' }, { id: '8', event: 'session.created', data: '{"seq":8}' }, { event: 'chat.delta', data: 'line one\nline two' }];
    expect(new SseParser().push(stream)).toEqual(expected);
    for (let cut = 1; cut < stream.length; cut++) {
      const parser = new SseParser();
      expect([...parser.push(stream.slice(0, cut)), ...parser.push(stream.slice(cut))]).toEqual(expected);
    }
  });

  it('keeps an unfinished message until its blank line comes', () => {
    const parser = new SseParser();
    expect(parser.push('event: output\ndata: {"text":"a"}\n')).toEqual([]);
    expect(parser.push('\n')).toEqual([{ event: 'output', data: '{"text":"a"}' }]);
  });
});
