import * as React from 'react';

import type { KaleService } from '../../api';
import { errorMessage } from '../../errors';
import type { Kale } from '../../types';
import { Button, ownToggle } from '../shared/fields';

/**
 * Where one runtime's package list stands.
 */
export type RuntimePackagesEntry =
  | { state: 'loading' }
  | { state: 'probing' }
  | { state: 'done'; result: Kale.IRuntimePackages }
  | { state: 'error'; message: string; probe: boolean };

const SOURCES: Record<string, string> = {
  environment: 'the server’s Python environment',
  cache: 'an earlier probe of this image',
  probe: 'a probe just now'
};

/**
 * A "Packages" disclosure for the selected runtime: what its image has
 * installed, loaded when first opened, with a filter; a runtime whose list
 * the server does not know yet offers a probe (which starts a pod).
 */
export function RuntimePackages(props: {
  service: KaleService;
  runtime: string;
}): JSX.Element {
  const { service, runtime } = props;
  const [open, setOpen] = React.useState(false);
  const [entries, setEntries] = React.useState<
    Record<string, RuntimePackagesEntry>
  >({});
  const abort = React.useRef<AbortController>();
  React.useEffect(() => {
    abort.current = new AbortController();
    return () => abort.current?.abort();
  }, []);

  const load = React.useCallback(
    async (name: string, probe: boolean) => {
      const set = (entry: RuntimePackagesEntry) =>
        setEntries(all => ({ ...all, [name]: entry }));
      set({ state: probe ? 'probing' : 'loading' });
      try {
        const result = await service.getRuntimePackages(name, {
          probe,
          signal: abort.current?.signal
        });
        set({ state: 'done', result });
      } catch (reason) {
        if (!abort.current?.signal.aborted) {
          set({ state: 'error', message: errorMessage(reason), probe });
        }
      }
    },
    [service]
  );

  const entry = entries[runtime];
  React.useEffect(() => {
    if (open && entry === undefined) {
      void load(runtime, false);
    }
  }, [open, runtime, entry, load]);

  const packages = entry?.state === 'done' ? entry.result.packages : undefined;
  return (
    <details
      className="kale-ext-RuntimePackages"
      open={open}
      onToggle={ownToggle(setOpen)}
    >
      <summary className="kale-ext-RuntimePackages-title">
        <span>Packages</span>
        {packages ? (
          <span
            className="kale-ext-Count"
            aria-label={`${Object.keys(packages).length} packages`}
          >
            {Object.keys(packages).length}
          </span>
        ) : (
          <span className="kale-ext-Muted kale-ext-RuntimePackages-hint">
            {open ? '' : `installed in ${runtime}: open to list`}
          </span>
        )}
      </summary>
      {open && (
        <div className="kale-ext-RuntimePackages-body">
          <PackagesBody
            runtime={runtime}
            entry={entry}
            onLoad={probe => void load(runtime, probe)}
          />
        </div>
      )}
    </details>
  );
}

function PackagesBody(props: {
  runtime: string;
  entry: RuntimePackagesEntry | undefined;
  onLoad: (probe: boolean) => void;
}): JSX.Element {
  const { runtime, entry, onLoad } = props;
  if (entry === undefined || entry.state === 'loading') {
    return (
      <p className="kale-ext-Muted" role="status">
        Loading the packages of {runtime}…
      </p>
    );
  }
  if (entry.state === 'probing') {
    return (
      <p className="kale-ext-Muted" role="status">
        Probing {runtime}: a pod lists its packages. This can take a few
        minutes.
      </p>
    );
  }
  if (entry.state === 'error') {
    return (
      <div className="kale-ext-Notice kale-ext-mod-error" role="alert">
        <div>{entry.message}</div>
        <Button kind="link" onClick={() => onLoad(entry.probe)}>
          Try again
        </Button>
      </div>
    );
  }
  const { packages, source } = entry.result;
  if (packages === null) {
    return <ProbeOffer runtime={runtime} onProbe={() => onLoad(true)} />;
  }
  return <PackageList packages={packages} source={source} />;
}

function ProbeOffer(props: {
  runtime: string;
  onProbe: () => void;
}): JSX.Element {
  const noteId = React.useId();
  return (
    <>
      <p className="kale-ext-Muted">
        The packages of {props.runtime} are not known yet.
      </p>
      <Button aria-describedby={noteId} onClick={props.onProbe}>
        Probe the runtime
      </Button>
      <p id={noteId} className="kale-ext-Field-hint">
        This starts a pod on the runtime that lists its packages (it may take
        minutes); the list is kept for this image.
      </p>
    </>
  );
}

function PackageList(props: {
  packages: Record<string, string>;
  source: Kale.IRuntimePackages['source'];
}): JSX.Element {
  const [filter, setFilter] = React.useState('');
  const all = Object.entries(props.packages);
  const needle = Private.canonical(filter);
  const shown = needle
    ? all.filter(([name]) => Private.canonical(name).includes(needle))
    : all;
  const count =
    shown.length === all.length
      ? `${all.length} ${all.length === 1 ? 'package' : 'packages'}`
      : `${shown.length} of ${all.length} packages`;
  return (
    <>
      <div className="kale-ext-RuntimePackages-head">
        <span role="status">{count}</span>
        {props.source && (
          <span className="kale-ext-Muted">
            from {SOURCES[props.source] ?? props.source}
          </span>
        )}
      </div>
      <input
        className="kale-ext-Input"
        type="search"
        spellCheck={false}
        autoComplete="off"
        placeholder="Filter by name"
        aria-label="Filter packages"
        value={filter}
        onChange={event => setFilter(event.target.value)}
      />
      {shown.length ? (
        <ul
          className="kale-ext-RuntimePackages-list"
          aria-label="Installed packages"
          tabIndex={0}
        >
          {shown.map(([name, version]) => (
            <li key={name}>
              <span className="kale-ext-RuntimePackages-name">{name}</span>{' '}
              <span className="kale-ext-RuntimePackages-version">
                {version}
              </span>
            </li>
          ))}
        </ul>
      ) : (
        <p className="kale-ext-Muted">No package matches “{filter}”.</p>
      )}
    </>
  );
}

namespace Private {
  /**
   * A name as the server keys it (PEP 503): `Scikit_Learn` → `scikit-learn`.
   */
  export function canonical(name: string): string {
    return name
      .trim()
      .toLowerCase()
      .replace(/[-_.]+/g, '-');
  }
}
