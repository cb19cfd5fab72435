// Small pieces every part of the engine uses: user-facing errors.
export * from './errors';
export * from './paths';
