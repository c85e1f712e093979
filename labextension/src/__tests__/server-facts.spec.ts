import { KaleAPIError, KaleService } from '../api';
import { ServerFacts } from '../panel/form/server-facts';
import type { Kale } from '../types';
import { defaultsResponse, fakeService } from './fakes';

function setup() {
  const service = fakeService();
  const facts = new ServerFacts(service as unknown as KaleService);
  return { service, facts };
}

describe('ServerFacts', () => {
  it('loads the backend, runtimes and tags, and says what failed', async () => {
    const { service, facts } = setup();
    service.listRuntimes.mockRejectedValue(new Error('no server'));
    await facts.load(true);
    expect(facts.backend?.name).toBe('local');
    expect(facts.tags.map(t => t.tag)).toEqual([
      'imports',
      'skip',
      'pipeline-parameters'
    ]);
    expect(facts.runtimes).toEqual([]);
    expect(facts.loadError).toBe('no server');
  });

  it('loads the defaults with the rest', async () => {
    const { service, facts } = setup();
    const mine = defaultsResponse({ memory: ['6Gi', 'JupyterLab settings'] });
    service.getDefaults.mockResolvedValue(mine);
    await facts.load(true);
    expect(service.getDefaults).toHaveBeenCalledTimes(1);
    expect(facts.defaults).toEqual(mine);
    expect(facts.defaultsError).toBe('');
    expect(facts.loadError).toBe('');
  });

  it("shows the server's message when a setting is invalid", async () => {
    const { service, facts } = setup();
    const message =
      "defaults.cpu: '4x' is not a Kubernetes quantity (set in the JupyterLab settings)";
    service.getDefaults.mockRejectedValue(
      new KaleAPIError(
        new Response(null, { status: 400 }),
        message,
        [],
        'defaults.cpu'
      )
    );
    await facts.load(true);
    expect(facts.defaultsError).toBe(message);
    expect(facts.loadError).toBe(message);
    expect(facts.backend?.name).toBe('local'); // the rest still loads
    expect(facts.tags).toHaveLength(3);

    // Fixed in the settings: the error goes, and the tags are not asked again.
    service.getDefaults.mockResolvedValue(defaultsResponse());
    await facts.load(false);
    expect(facts.defaultsError).toBe('');
    expect(facts.loadError).toBe('');
    expect(facts.defaults).toEqual(defaultsResponse());
    expect(service.listTags).toHaveBeenCalledTimes(1);
    expect(facts.tags).toHaveLength(3);
  });

  it('keeps what a failed load could not replace', async () => {
    const { service, facts } = setup();
    await facts.load(true);
    service.getBackend.mockRejectedValue(new Error('server gone'));
    await facts.load(false);
    expect(facts.backend?.name).toBe('local');
    expect(facts.loadError).toBe('server gone');
  });

  it('keeps the answer of the last load when loads overlap', async () => {
    const { service, facts } = setup();
    let first!: (d: Kale.IDefaults) => void;
    service.getDefaults.mockReturnValueOnce(
      new Promise<Kale.IDefaults>(resolve => (first = resolve))
    );
    const older = facts.load(true);
    const latest = defaultsResponse({
      runtime: ['site', 'server configuration']
    });
    service.getDefaults.mockResolvedValueOnce(latest);
    await facts.load(false);
    first(defaultsResponse());
    await older;
    expect(facts.defaults).toEqual(latest);
    expect(facts.tags).toHaveLength(3); // the first load's tags still count
  });
});
