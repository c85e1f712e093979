import type { ISignal } from '@lumino/signaling';
import * as React from 'react';

/**
 * Re-render when a signal fires. Rendering in the same turn as the change
 * keeps React's controlled inputs (and their caret) steady.
 */
export function useSignal(signal: ISignal<unknown, unknown>): void {
  const [, setTick] = React.useState(0);
  React.useEffect(() => {
    const slot = () => setTick(n => n + 1);
    signal.connect(slot);
    return () => {
      signal.disconnect(slot);
    };
  }, [signal]);
}
