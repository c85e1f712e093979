import { addBelowIcon } from '@jupyterlab/ui-components';
import * as React from 'react';

import { IconButton } from '../panel/shared/fields';
import type { ILoadOffer } from './load-result';

/**
 * "Load into the notebook" on an ended job's row, an icon (a cell added
 * below) whose tooltip says what it inserts. When there is nothing to load
 * it stays focusable (aria-disabled, not disabled) so its tooltip can say
 * why.
 */
export function LoadResultButton(props: {
  name: string;
  offer: ILoadOffer | null;
  onLoad: () => void;
}): JSX.Element | null {
  const { offer } = props;
  if (!offer) {
    return null;
  }
  return (
    <IconButton
      icon={addBelowIcon}
      className="kale-ext-LoadResult"
      label={`Load ${props.name} into the notebook`}
      aria-disabled={!offer.enabled || undefined}
      title={`Load into the notebook: ${offer.title}`}
      onClick={() => offer.enabled && props.onLoad()}
    />
  );
}
