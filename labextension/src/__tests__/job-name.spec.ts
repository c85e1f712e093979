import { JobNameReservation } from '../panel/jobs/job-name';
import { compileResult } from './fakes';

describe('JobNameReservation', () => {
  it('keeps the first name the server makes up, for the next requests', () => {
    const names = new JobNameReservation();
    const body = { path: 'nb.ipynb', options: { nodes: 2 } };
    expect(names.apply(body)).toBe(body);
    expect(names.observe(compileResult({ job_name: 'nb-abcde' }))).toBe(false);
    expect(names.observe(compileResult({ job_name: 'nb-fghij' }))).toBe(false);
    expect(names.name).toBe('nb-abcde');
    expect(names.apply(body)).toEqual({
      path: 'nb.ipynb',
      options: { nodes: 2, name: 'nb-abcde' }
    });
    // A name of the user's wins.
    const mine = { path: 'nb.ipynb', options: { name: 'mine' } };
    expect(names.apply(mine)).toBe(mine);
  });

  it('lets a refused name go (the caller checks again), and a submitted one', () => {
    const names = new JobNameReservation();
    names.observe(compileResult({ job_name: 'nb-abcde' }));
    const refused = compileResult({
      ok: false,
      errors: [
        {
          severity: 'error',
          message: 'name: too long',
          cell: null,
          field: 'name'
        }
      ]
    });
    expect(names.observe(refused)).toBe(true);
    expect(names.name).toBeNull();
    names.observe(compileResult({ job_name: 'nb-klmno' }));
    names.release();
    expect(names.name).toBeNull();
  });
});
