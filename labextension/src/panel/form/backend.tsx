import * as React from 'react';

import type { Kale } from '../../types';

/**
 * Where jobs go: the local backend or a Kubernetes namespace, and why.
 */
export function BackendInfo(props: {
  backend: Kale.IBackend | null;
  error: string;
}): JSX.Element {
  const { backend, error } = props;
  if (!backend) {
    return (
      <div className="kale-ext-Backend" role="status">
        {error ? (
          <span className="kale-ext-Field-error">kale_ext server: {error}</span>
        ) : (
          <span className="kale-ext-Muted">Connecting…</span>
        )}
      </div>
    );
  }
  const local = backend.name === 'local';
  return (
    <div className="kale-ext-Backend" role="status" data-backend={backend.name}>
      <span
        className={`kale-ext-Pill kale-ext-Pill-${local ? 'local' : 'kube'}`}
      >
        {local ? 'Local' : 'Kubernetes'}
      </span>
      {!local && backend.namespace && (
        <span className="kale-ext-Backend-namespace">
          namespace <code>{backend.namespace}</code>
        </span>
      )}
      <div className="kale-ext-Backend-reason">{backend.reason}</div>
    </div>
  );
}
