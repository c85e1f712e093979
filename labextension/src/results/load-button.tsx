import * as React from 'react';

import { Button } from '../panel/shared/fields';
import type { ILoadOffer } from './load-result';

/**
 * "Load into the notebook" on an ended job's row. When there is nothing to
 * load it stays focusable (aria-disabled, not disabled) so its tooltip can
 * say why.
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
    <Button
      kind="link"
      className="kale-ext-LoadResult"
      aria-label={`Load ${props.name} into the notebook`}
      aria-disabled={!offer.enabled || undefined}
      title={offer.title}
      onClick={() => offer.enabled && props.onLoad()}
    >
      Load into the notebook
    </Button>
  );
}
