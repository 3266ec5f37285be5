/** A configuration value that stops start-up; the message names the variable. Dependency-free, so the CLI can catch it without loading the configuration schema. */
export class ConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, message: string) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
    this.variable = variable;
  }
}
