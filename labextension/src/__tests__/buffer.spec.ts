import { LogBuffer } from '../logs/buffer';
import type { Kale } from '../types';

function line(
  node: number,
  text: string,
  rank: number | null = node
): Kale.ILogLine {
  return { node, rank, text, offset: 0 };
}

function manual(): { buffer: LogBuffer; frames: (() => void)[] } {
  const frames: (() => void)[] = [];
  const buffer = new LogBuffer({ schedule: f => frames.push(f) });
  return { buffer, frames };
}

describe('LogBuffer', () => {
  it('batches appends: one change per frame', () => {
    const { buffer, frames } = manual();
    const changed = jest.fn();
    buffer.changed.connect(changed);
    buffer.push([line(0, 'a')]);
    buffer.push([line(1, 'b'), line(0, 'c')]);
    expect(buffer.size).toBe(0);
    expect(frames).toHaveLength(1);
    frames[0]();
    expect(changed).toHaveBeenCalledTimes(1);
    expect(buffer.size).toBe(3);
    expect([0, 1, 2].map(i => buffer.line(i).text)).toEqual(['a', 'b', 'c']);
    expect(buffer.nodes).toEqual([0, 1]);
  });

  it('filters by node, rank and text, and keeps the filter up to date', () => {
    const { buffer, frames } = manual();
    buffer.push([line(0, 'Loss 1'), line(1, 'loss 2', 3), line(1, 'other', 2)]);
    frames.shift()!();
    buffer.setFilter({ node: 1 });
    expect(buffer.size).toBe(2);
    buffer.setFilter({ query: 'LOSS' });
    expect(buffer.size).toBe(1);
    expect(buffer.line(0).text).toBe('loss 2');
    buffer.push([line(1, 'more loss'), line(0, 'loss on 0')]);
    frames.shift()!();
    expect(buffer.size).toBe(2);
    expect(buffer.line(1).text).toBe('more loss');
    buffer.setFilter({ node: null, query: '', rank: 2 });
    expect(buffer.size).toBe(1);
    expect(buffer.line(0).text).toBe('other');
    expect(buffer.ranks).toEqual([0, 1, 2, 3]);
    buffer.setFilter({ rank: null });
    expect(buffer.size).toBe(buffer.total);
  });

  it('downloads what the filter shows', () => {
    const { buffer, frames } = manual();
    buffer.push([line(0, 'a'), line(1, 'b')]);
    frames.shift()!();
    expect(buffer.text()).toBe('a\nb\n');
    buffer.setFilter({ node: 1 });
    expect(buffer.text()).toBe('b\n');
  });

  it('keeps at most maxLines, dropping the oldest', () => {
    const frames: (() => void)[] = [];
    const buffer = new LogBuffer({
      schedule: f => frames.push(f),
      maxLines: 3
    });
    buffer.push([0, 1, 2, 3, 4].map(i => line(i % 2, `l${i}`)));
    frames.shift()!();
    expect(buffer.total).toBe(3);
    expect(buffer.line(0).text).toBe('l2');
    buffer.setFilter({ node: 0 });
    expect(buffer.text()).toBe('l2\nl4\n');
  });

  it('holds 50,000 lines and filters them', () => {
    // (how fast: benchmarks/panel, the logs view with 50,000 lines)
    const { buffer, frames } = manual();
    buffer.push(
      Array.from({ length: 50000 }, (_, i) => line(i % 2, `step ${i}`))
    );
    frames.shift()!();
    buffer.setFilter({ query: 'step 4999' });
    expect(buffer.size).toBe(11); // 4999 and 49990..49999
    expect(buffer.line(0).text).toBe('step 4999');
    expect(buffer.line(10).text).toBe('step 49999');
  });

  it('clears', () => {
    const { buffer, frames } = manual();
    buffer.push([line(0, 'a')]);
    frames.shift()!();
    buffer.clear();
    expect(buffer.total).toBe(0);
    expect(buffer.nodes).toEqual([]);
  });
});

describe('LogBuffer and metrics lines', () => {
  const metric = (record: Record<string, unknown>): Kale.ILogLine =>
    line(0, `KALE_METRIC ${JSON.stringify(record)}`);
  const flush = (frames: (() => void)[]) => frames.splice(0).forEach(f => f());

  it('hides the metrics lines by default, and shows them on request', () => {
    const { buffer, frames } = manual();
    buffer.push([line(0, 'a'), metric({ step: 1, loss: 1 }), line(0, 'b')]);
    flush(frames);
    expect(buffer.total).toBe(3);
    expect(buffer.metricLines).toBe(1);
    expect(buffer.size).toBe(2);
    expect([buffer.line(0).text, buffer.line(1).text]).toEqual(['a', 'b']);
    buffer.push([metric({ step: 2, loss: 1 }), line(0, 'c')]);
    flush(frames);
    expect(buffer.size).toBe(3);
    buffer.setFilter({ metrics: true });
    expect(buffer.size).toBe(5);
    expect(buffer.text()).toContain('KALE_METRIC');
    buffer.setFilter({ metrics: false, query: 'c' });
    expect(buffer.size).toBe(1);
  });

  it('keeps no index while no metrics line came', () => {
    const { buffer, frames } = manual();
    buffer.push([line(0, 'a'), line(0, 'b')]);
    flush(frames);
    expect(buffer.size).toBe(2);
    buffer.clear();
    expect(buffer.metricLines).toBe(0);
  });

  it('forgets the metrics lines dropped with the oldest lines', () => {
    const frames: (() => void)[] = [];
    const buffer = new LogBuffer({
      schedule: f => frames.push(f),
      maxLines: 2
    });
    buffer.push([metric({ loss: 1 }), line(0, 'a'), line(0, 'b')]);
    flush(frames);
    expect(buffer.metricLines).toBe(0);
    expect(buffer.size).toBe(2);
  });
});
