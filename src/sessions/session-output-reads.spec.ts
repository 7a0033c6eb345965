import { relayedMessage } from './session-output-reads';

describe('relayedMessage', () => {
  it("Given the owner's tail and output messages, Then they are relayed as they were sent", () => {
    expect(relayedMessage({ event: 'tail', data: '{"lines":["a","b"]}' })).toEqual({ type: 'tail', data: { lines: ['a', 'b'] } });
    expect(relayedMessage({ event: 'output', data: '{"text":"é end\\n"}' })).toEqual({ type: 'output', data: { text: 'é end\n' } });
  });

  it('Given a message of another kind, one not JSON or one of the wrong shape, Then none is relayed', () => {
    expect(relayedMessage({ event: 'error', data: '"Internal server error"' })).toBeNull();
    expect(relayedMessage({ event: 'output', data: 'not json' })).toBeNull();
    expect(relayedMessage({ event: 'tail', data: '{"lines":[1]}' })).toBeNull();
    expect(relayedMessage({ event: 'output', data: '{"text":null}' })).toBeNull();
  });
});
