import { Widget } from '@lumino/widgets';

import type { KaleService } from '../../api';
import { canCancel, cancelText } from '../../compare/sweep-rows';
import { SweepView } from '../../compare/sweep-view';
import type { Kale } from '../../types';
import { until } from '../helpers';
import { inAct } from '../render';

function sweep(
  status: Kale.ISweep['status'],
  trialStatus: Kale.TrialStatus = 'Running'
): Kale.ISweep {
  return {
    name: 'nb-sweep',
    status,
    search: 'grid',
    parallel: 2,
    metric: 'loss',
    goal: null,
    space: [],
    best: null,
    max_trials: 2,
    trials: [
      {
        number: 0,
        job: 'nb-sweep-0',
        parameters: { lr: 0.1 },
        status: trialStatus,
        metric: null,
        best: false
      }
    ]
  };
}

function fakeService(first: Kale.ISweep) {
  const state = { sweep: first };
  const service = {
    getSweep: jest.fn(async () => state.sweep),
    cancelSweep: jest.fn(async () => {
      state.sweep = sweep('Cancelled', 'Cancelled');
      return state.sweep;
    })
  };
  return { state, service: service as unknown as KaleService, fake: service };
}

async function open(
  first: Kale.ISweep,
  confirm: jest.Mock
): Promise<{ view: SweepView; fake: ReturnType<typeof fakeService>['fake'] }> {
  const { service, fake } = fakeService(first);
  const view = new SweepView({
    service,
    name: first.name,
    confirm,
    pollInterval: 50
  });
  await inAct(() => Widget.attach(view, document.body));
  await until(() => view.node.querySelector('[data-sweep]'));
  return { view, fake };
}

function cancelButton(view: SweepView): HTMLButtonElement {
  return [...view.node.querySelectorAll('button')].find(b =>
    /Cancel/.test(b.textContent ?? '')
  ) as HTMLButtonElement;
}

describe('cancelling a sweep', () => {
  let view: SweepView | undefined;
  afterEach(() => view?.dispose());

  it('can be cancelled until it has ended; the dialog says what happens', () => {
    expect(canCancel(sweep('Running'))).toBe(true);
    expect(canCancel(sweep('Interrupted'))).toBe(true);
    for (const s of ['Complete', 'Failed', 'Cancelled'] as const) {
      expect(canCancel(sweep(s))).toBe(false);
    }
    expect(cancelText(sweep('Running'))).toBe(
      'Cancel sweep nb-sweep? No more trials start. Its running trial is ' +
        'stopped and kept (reading Cancelled, logs and outputs stay). ' +
        'Trials that ended stay as they are.'
    );
    expect(cancelText(sweep('Running', 'Complete'))).toContain(
      'No trial is running.'
    );
  });

  it('asks, cancels through the service, and reads Cancelled', async () => {
    const confirm = jest.fn().mockResolvedValue(true);
    const opened = await open(sweep('Running'), confirm);
    view = opened.view;
    const button = cancelButton(view);
    expect(button.textContent).toBe('Cancel sweep');
    expect(button.disabled).toBe(false);
    await inAct(() => button.click());
    await until(() => opened.fake.cancelSweep.mock.calls.length > 0);
    expect(confirm).toHaveBeenCalledWith(
      'nb-sweep',
      expect.stringContaining('No more trials start')
    );
    expect(opened.fake.cancelSweep).toHaveBeenCalledWith('nb-sweep');
    const root = await until(() =>
      view!.node.querySelector('[data-status="Cancelled"][data-sweep]')
    );
    expect(root.querySelector('[role="status"]')!.textContent).toBe(
      'Cancelled'
    );
    expect(
      root
        .querySelector('tr[data-job="nb-sweep-0"]')!
        .getAttribute('data-status')
    ).toBe('Cancelled');
    await until(() => cancelButton(view!).disabled);
  });

  it('does nothing when the user keeps it running', async () => {
    const confirm = jest.fn().mockResolvedValue(false);
    const opened = await open(sweep('Running'), confirm);
    view = opened.view;
    await inAct(async () => {
      await view!.cancel();
    });
    expect(confirm).toHaveBeenCalled();
    expect(opened.fake.cancelSweep).not.toHaveBeenCalled();
  });

  it('is disabled once the sweep has ended', async () => {
    const confirm = jest.fn().mockResolvedValue(true);
    const opened = await open(sweep('Complete', 'Complete'), confirm);
    view = opened.view;
    expect(cancelButton(view).disabled).toBe(true);
    expect(await view.cancel()).toBe(false);
    expect(confirm).not.toHaveBeenCalled();
  });

  it('shows the server’s message when it refuses', async () => {
    const confirm = jest.fn().mockResolvedValue(true);
    const opened = await open(sweep('Running'), confirm);
    view = opened.view;
    opened.fake.cancelSweep.mockRejectedValueOnce(
      new Error('sweep nb-sweep has ended (Complete)')
    );
    await inAct(async () => {
      expect(await view!.cancel()).toBe(false);
    });
    expect(view.node.querySelector('[role="alert"]')!.textContent).toBe(
      'sweep nb-sweep has ended (Complete)'
    );
  });
});

describe('a sweep with no metric', () => {
  let view: SweepView | undefined;
  afterEach(() => view?.dispose());

  const headers = (v: SweepView) =>
    [...v.node.querySelectorAll('thead th')].map(th => th.textContent);

  it('says its trials are not ranked and how to rank them, with no column of dashes', async () => {
    ({ view } = await open(
      { ...sweep('Complete', 'Complete'), metric: null },
      jest.fn()
    ));
    expect(view.node.querySelector('[role="note"]')?.textContent).toContain(
      'No metric was chosen, so no trial is ranked or marked best'
    );
    // in the trials' own order
    expect(headers(view)).toEqual(['Trial ▴', 'Job', 'Parameters', 'Status']);
    expect(view.node.querySelector('tbody tr')?.textContent).not.toContain('—');
  });

  it('ranks by the metric chosen, with no note', async () => {
    ({ view } = await open(sweep('Complete', 'Complete'), jest.fn()));
    expect(view.node.querySelector('[role="note"]')).toBeNull();
    expect(headers(view)).toEqual([
      'Trial',
      'Job',
      'Parameters',
      'Status',
      'loss ▴'
    ]);
  });
});
