import {
  nameParts,
  namesParts,
  splitTimes,
  timeAgo,
  timeTitle
} from '../panel/jobs/job-label';

describe('a name cut in the middle', () => {
  it('keeps in its tail the part that tells it from the most similar name', () => {
    expect(
      nameParts('mnist-train-a1b2c', ['mnist-train-x9y8z', 'cifar-q'])
    ).toEqual({ head: 'mnist-train', tail: '-a1b2c' });
    // the word it differs in, whole: lr0.01 and lr0.1 differ after `lr0.`
    expect(
      nameParts('resnet-lr0.01-bs64', ['resnet-lr0.1-bs64', 'resnet-x'])
    ).toEqual({ head: 'resnet', tail: '-lr0.01-bs64' });
    expect(nameParts('run_2', ['run_10'])).toEqual({
      head: 'run',
      tail: '_2'
    });
  });

  it('keeps a name like no other, or alone, whole in its tail', () => {
    expect(nameParts('alpha-1', ['beta-1'])).toEqual({
      head: '',
      tail: 'alpha-1'
    });
    expect(nameParts('alpha-1', [])).toEqual({ head: '', tail: 'alpha-1' });
    expect(nameParts('alpha-1', ['alpha-1'])).toEqual({
      head: '',
      tail: 'alpha-1'
    });
    // a name that starts another: nothing of it is the other's alone
    expect(nameParts('run', ['run-2'])).toEqual({ head: '', tail: 'run' });
    expect(nameParts('run-2', ['run'])).toEqual({ head: 'run', tail: '-2' });
  });

  it('splits every name of a list as against all the others', () => {
    const names = [
      'mnist-train-aaaaa',
      'cifar-b',
      'mnist-train-aabbb',
      'mnist-eval-c',
      'mnist-train-aaaaa' // listed twice: once is enough
    ];
    const parts = namesParts(names);
    expect(parts.size).toBe(4);
    for (const name of names) {
      const all = names.filter(n => n !== name);
      expect(parts.get(name)).toEqual(nameParts(name, all));
      const { head, tail } = parts.get(name)!;
      expect(head + tail).toBe(name);
    }
    expect(parts.get('mnist-train-aabbb')!.tail).toBe('-aabbb');
    expect(parts.get('mnist-eval-c')!.tail).toBe('-eval-c');
  });
});

describe('a time, as the list writes it', () => {
  const NOW = Date.parse('2026-12-06T12:00:00Z');

  it.each([
    ['2026-12-06T12:00:00Z', 'just now'],
    ['2026-12-06T12:00:30Z', 'just now'], // ahead of this clock
    ['2026-12-06T11:59:20Z', '40 s ago'],
    ['2026-12-06T11:57:00Z', '3 min ago'],
    ['2026-12-06T11:00:00Z', '1 h ago'],
    ['2026-12-04T13:00:00Z', '47 h ago'],
    ['2026-12-01T12:00:00Z', '5 days ago'],
    ['not a time', ''],
    [null, '']
  ])('%s is %s', (iso, words) => {
    expect(timeAgo(iso, NOW)).toBe(words);
  });

  it('moves on as the clock does', () => {
    const iso = '2026-12-06T11:59:00Z';
    expect(timeAgo(iso, NOW)).toBe('1 min ago');
    expect(timeAgo(iso, NOW + 120_000)).toBe('3 min ago');
  });

  it('says the time itself on hover, in UTC too', () => {
    const title = timeTitle('2026-12-06T08:00:00Z');
    expect(title).toContain(new Date('2026-12-06T08:00:00Z').toLocaleString());
    expect(title).toContain('(2026-12-06T08:00:00Z)');
    expect(timeTitle('2026-12-06T09:00:00+01:00')).toContain(
      '(2026-12-06T08:00:00Z)'
    );
    expect(timeTitle('soon')).toBe('');
  });

  it('finds the times in a text from the server', () => {
    expect(splitTimes('stopped by ann at 2026-12-06T08:00:00Z, kept')).toEqual([
      'stopped by ann at ',
      { time: '2026-12-06T08:00:00Z' },
      ', kept'
    ]);
    expect(splitTimes('2026-12-06T08:00:00.5+01:00')).toEqual([
      { time: '2026-12-06T08:00:00.5+01:00' }
    ]);
    expect(splitTimes('epoch 2026, no time')).toEqual(['epoch 2026, no time']);
  });
});
