/**
 * The browser tests' steps moved to ./fixtures (its `kale` fixture): import
 * from there. This name stays for specs written before the move.
 */
export * from './fixtures';
