import { SSEParser } from '../sse';

const STREAM =
  ': keep-alive\n\n' +
  'id: 0:10\ndata: {"node": 0, "text": "a"}\n\n' +
  'id: 1:7\r\ndata: {"node": 1,\r\ndata:  "text": "b"}\r\n\r\n' +
  'data:no space\r\rretry: 1000\nevent: end\ndata: {"status": "Complete"}\n\n';

const EVENTS = [
  { id: '0:10', event: 'message', data: '{"node": 0, "text": "a"}' },
  { id: '1:7', event: 'message', data: '{"node": 1,\n "text": "b"}' },
  { id: '1:7', event: 'message', data: 'no space' },
  { id: '1:7', event: 'end', data: '{"status": "Complete"}' }
];

describe('SSEParser', () => {
  it('parses fields, comments, multi-line data and every line ending', () => {
    const parser = new SSEParser();
    expect([...parser.feed(STREAM), ...parser.end()]).toEqual(EVENTS);
    expect(parser.lastEventId).toBe('1:7');
  });

  it('gives the same events however the stream is split', () => {
    for (let cut = 0; cut <= STREAM.length; cut++) {
      const parser = new SSEParser();
      const events = [
        ...parser.feed(STREAM.slice(0, cut)),
        ...parser.feed(STREAM.slice(cut)),
        ...parser.end()
      ];
      expect(events).toEqual(EVENTS);
    }
  });

  it('parses one character at a time', () => {
    const parser = new SSEParser();
    const events = [];
    for (const ch of STREAM) {
      events.push(...parser.feed(ch));
    }
    expect(events).toEqual(EVENTS);
  });

  it('drops an event the stream ends in the middle of', () => {
    const parser = new SSEParser();
    expect(parser.feed('id: 3:1\ndata: half')).toEqual([]);
    expect(parser.end()).toEqual([]);
  });

  it('dispatches nothing for an event with no data', () => {
    const parser = new SSEParser();
    expect(parser.feed('event: ping\n\nid: 5:5\n\n')).toEqual([]);
    expect(parser.lastEventId).toBe('5:5');
  });

  it('parses 50,000 events in one chunk', () => {
    // (how fast: benchmarks/panel, the logs view with 50,000 lines)
    const chunk = Array.from(
      { length: 50000 },
      (_, i) => `id: 0:${i}\ndata: {"node": 0, "text": "line ${i}"}\n\n`
    ).join('');
    const events = new SSEParser().feed(chunk);
    expect(events).toHaveLength(50000);
    expect(events[0]).toEqual({
      id: '0:0',
      event: 'message',
      data: '{"node": 0, "text": "line 0"}'
    });
    expect(events[49999].id).toBe('0:49999');
  });
});
