import { parseEventStream } from './peer-client';

describe('parseEventStream', () => {
  it('Given whole messages and one cut off, Then it answers the whole ones in order and keeps the rest for the next chunk', () => {
    const first = parseEventStream('event: tail\ndata: {"lines":[]}\n\nid: 7\nevent: output\ndata: {"text":"a"}\n\nevent: out');
    expect(first.events).toEqual([
      { event: 'tail', data: '{"lines":[]}' },
      { event: 'output', data: '{"text":"a"}' },
    ]);
    const second = parseEventStream(first.rest + 'put\ndata: {"text":"b"}\n\n');
    expect(second).toEqual({ events: [{ event: 'output', data: '{"text":"b"}' }], rest: '' });
  });

  it('Given comments, CRLF line ends, several data lines and a message without data, Then data lines join with newlines and the rest is dropped', () => {
    const { events } = parseEventStream(': keep-alive\r\n\r\ndata: one\r\ndata:two\r\n\r\nevent: empty\r\n\r\n');
    expect(events).toEqual([{ event: 'message', data: 'one\ntwo' }]);
  });
});
