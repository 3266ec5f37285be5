import { loadConfig } from '../../core/config.ts';
import { DEMONSTRATION_MODEL, startDemonstrationModel } from '../../computer-use/demo-model.ts';
import { argumentsAfter, UsageError, type WardCommand } from '../command.ts';

const USAGE = `Usage: ward computer-use demo-model

Starts Ward's demonstration model on 127.0.0.1:COMPUTER_USE_DEMO_MODEL_PORT (default 8190): a scripted
stand-in for the Messages API, so a computer-use run can be watched end to end offline, with no paid
model. It follows simple task patterns (open the <name> page, click <name>, take a screenshot) and
reports what it sees; runs it drives are labelled as demonstrations. It finds links by opening the
console itself, so use it with a console that opens without sign-in (npm start in development).
docs/computer-use.md, "Trying it without a paid model".

Example:
  npx ward computer-use demo-model
  # in another terminal:
  COMPUTER_USE_MODEL_URL=http://127.0.0.1:8190 COMPUTER_USE_API_KEY=demo COMPUTER_USE_MODEL=${DEMONSTRATION_MODEL} npm start`;

/** `ward computer-use demo-model`: the demonstration model on loopback, until SIGINT or SIGTERM. */
export const computerUseCommand: WardCommand = {
  name: 'computer-use',
  usage: USAGE,
  async run(args) {
    const rest = argumentsAfter('demo-model', args);
    if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`);
    const config = loadConfig();
    const model = await startDemonstrationModel({ port: config.COMPUTER_USE_DEMO_MODEL_PORT, chromiumPath: config.CHROMIUM_PATH });
    console.log(`demonstration model listening at ${model.url}`);
    console.log(`point the registry at it: COMPUTER_USE_MODEL_URL=${model.url} COMPUTER_USE_API_KEY=demo COMPUTER_USE_MODEL=${DEMONSTRATION_MODEL}`);
    const stop = () => void model.close().then(() => process.exit(0), () => process.exit(1));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    return 'running';
  },
};
