import * as React from 'react';

import type { Kale } from '../../types';
import { Button } from '../shared/fields';

type Field = keyof Kale.IDefaultValues;

/**
 * The fields of the defaults, in the order the settings list them.
 */
const FIELDS: Field[] = [
  'backend',
  'namespace',
  'runtime',
  'image',
  'pip_index_urls',
  'nodes',
  'cpu',
  'memory',
  'gpu'
];

/**
 * How a field is named in the line.
 */
const LABELS: Record<Field, string> = {
  backend: 'backend',
  namespace: 'namespace',
  runtime: 'runtime',
  image: 'image',
  pip_index_urls: 'pip index',
  nodes: 'nodes',
  cpu: 'CPU',
  memory: 'memory',
  gpu: 'GPUs'
};

/**
 * What an unset (null or empty) field means.
 */
const UNSET: Partial<Record<Field, string>> = {
  namespace: 'the kubeconfig context’s',
  image: 'the runtime’s',
  pip_index_urls: 'PyPI',
  nodes: 'the runtime’s',
  cpu: 'none requested',
  memory: 'none requested',
  gpu: 'none'
};

/**
 * The layers above the built-in defaults, highest first (the order the
 * line lists them in).
 */
const SOURCES = ['JupyterLab settings', 'server configuration'];
const BUILT_IN = 'built in';

/**
 * The defaults that are not built in, grouped by the layer that set them
 * (highest first), each as `field value`.
 */
export function defaultsBySource(
  defaults: Kale.IDefaults
): { source: string; items: string[] }[] {
  const groups = new Map<string, string[]>();
  const fields = [
    ...FIELDS,
    ...(Object.keys(defaults.sources) as Field[]).filter(
      f => !FIELDS.includes(f)
    )
  ];
  for (const field of fields) {
    const source = defaults.sources[field];
    if (!source || source === BUILT_IN) {
      continue;
    }
    const item = `${LABELS[field] ?? field} ${formatValue(field, defaults.defaults[field])}`;
    groups.set(source, [...(groups.get(source) ?? []), item]);
  }
  const rank = (source: string) => {
    const i = SOURCES.indexOf(source);
    return i < 0 ? SOURCES.length : i;
  };
  return [...groups]
    .sort(([a], [b]) => rank(a) - rank(b))
    .map(([source, items]) => ({ source, items }));
}

function formatValue(field: Field, value: unknown): string {
  if (Array.isArray(value)) {
    return value.length ? value.join(' + ') : (UNSET[field] ?? 'none');
  }
  if (value === null || value === undefined || value === '') {
    return UNSET[field] ?? 'none';
  }
  return String(value);
}

/**
 * One line above the job form: empty fields use the defaults, and which
 * ones a site or the user set (the built-in ones are not listed), with a
 * way to edit them. An invalid setting shows the server's message, which
 * names the setting and where it is set.
 */
export function DefaultsInfo(props: {
  defaults: Kale.IDefaults | null;
  error: string;
  onEdit?: () => void;
}): JSX.Element | null {
  const { defaults, error, onEdit } = props;
  if (!error && !defaults) {
    return null; // not loaded yet
  }
  const edit = onEdit && (
    <Button
      kind="link"
      className="kale-ext-Defaults-edit"
      title="Edit the defaults in JupyterLab’s Settings Editor"
      onClick={onEdit}
    >
      Edit defaults
    </Button>
  );
  if (error) {
    return (
      <div className="kale-ext-Defaults" data-state="error">
        <span className="kale-ext-Field-error" role="alert">
          {error}
        </span>
        {edit}
      </div>
    );
  }
  const groups = defaultsBySource(defaults!);
  return (
    <div
      className="kale-ext-Defaults"
      title="The notebook’s own choices and this form come first, then your JupyterLab settings, then the server configuration, then the built-in defaults."
    >
      <span className="kale-ext-Defaults-text">
        {groups.length === 0 ? (
          'Empty fields use the built-in defaults.'
        ) : (
          <>
            Empty fields use the defaults:{' '}
            {groups.map((group, i) => (
              <React.Fragment key={group.source}>
                {i > 0 && ' · '}
                <span
                  className="kale-ext-Defaults-group"
                  data-source={group.source}
                >
                  {group.source}: {group.items.join(', ')}
                </span>
              </React.Fragment>
            ))}
          </>
        )}
      </span>
      {edit}
    </div>
  );
}
