/**
 * One server-sent event.
 */
export interface IServerSentEvent {
  /** The `id:` of this event, or the last id seen before it. */
  id: string;
  /** The `event:` type; `message` when none was given. */
  event: string;
  /** The `data:` lines, joined by newlines. */
  data: string;
}

/**
 * An incremental parser of a `text/event-stream` body (the WHATWG rules for
 * `id:`, `event:` and `data:` fields, comments and line endings).
 *
 * Feed it text as it arrives, in chunks of any size; it returns the events
 * completed by each chunk.
 */
export class SSEParser {
  /**
   * The last event id seen (what a reconnection sends as `Last-Event-ID`).
   */
  get lastEventId(): string {
    return this._lastId;
  }

  /**
   * Parse a chunk; returns the events it completes.
   */
  feed(chunk: string): IServerSentEvent[] {
    const events: IServerSentEvent[] = [];
    let text = this._partial + chunk;
    // A CR at the end of a chunk may be the first half of a CRLF.
    const pendingCR = text.endsWith('\r');
    if (pendingCR) {
      text = text.slice(0, -1);
    }
    // One scan for each line end: indexOf from where the last line ended
    // (searching for CR and LF separately would rescan a chunk without CRs
    // once per line).
    let start = 0;
    let cr = text.indexOf('\r');
    let lf = text.indexOf('\n');
    while (cr >= 0 || lf >= 0) {
      const end = cr < 0 ? lf : lf < 0 ? cr : Math.min(cr, lf);
      this._line(text.slice(start, end), events);
      start = end + (end === cr && lf === end + 1 ? 2 : 1);
      if (cr >= 0 && cr < start) {
        cr = text.indexOf('\r', start);
      }
      if (lf >= 0 && lf < start) {
        lf = text.indexOf('\n', start);
      }
    }
    this._partial = text.slice(start) + (pendingCR ? '\r' : '');
    return events;
  }

  /**
   * End of the stream: an unterminated event is discarded, as the spec says.
   */
  end(): IServerSentEvent[] {
    const events = this._partial ? this.feed('\n') : [];
    this._reset();
    return events;
  }

  private _line(line: string, events: IServerSentEvent[]): void {
    if (line === '') {
      if (this._data !== null) {
        events.push({
          id: this._lastId,
          event: this._event || 'message',
          data: this._data
        });
      }
      this._reset();
      return;
    }
    if (line.startsWith(':')) {
      return; // a comment: keep-alive
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) {
      value = value.slice(1);
    }
    switch (field) {
      case 'data':
        this._data = this._data === null ? value : `${this._data}\n${value}`;
        break;
      case 'event':
        this._event = value;
        break;
      case 'id':
        if (!value.includes('\0')) {
          this._lastId = value;
        }
        break;
      default:
        break; // `retry:` and unknown fields
    }
  }

  private _reset(): void {
    this._data = null;
    this._event = '';
  }

  private _partial = '';
  private _data: string | null = null;
  private _event = '';
  private _lastId = '';
}
