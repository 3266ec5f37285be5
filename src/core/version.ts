import packageJson from '../../package.json' with { type: 'json' };

/** Ward's version, from package.json: what every process reports (health, diagnostics, `--version`). */
export const WARD_VERSION: string = packageJson.version;
