import { Type } from 'typebox';
import { RUN_STATUSES } from '../run-statuses.ts';
import { CONSOLE_PAGES } from '../console-pages.ts';
import { PERSONAS } from '../personas.ts';
import { Cursor, Nullable, PageLimit, StringEnum, Timestamp } from './common.ts';

const Url = Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048 });
const Sha256 = Type.String({ pattern: '^[0-9a-f]{64}$' });

/** Spec "Computer use (admin only)": the run body. */
export const CreateRunBody = Type.Object(
  {
    task: Type.String({ minLength: 1, maxLength: 4000, description: 'What to do, in natural language' }),
    url: Type.Optional({ ...Url, description: "Opened before the first turn; default the console's dashboard" }),
    persona: Type.Optional(StringEnum(PERSONAS, { description: 'observer, auditor, clinician, security-analyst: read-only; operator: may act. Default observer' })),
    max_turns: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 20 })),
    headless: Type.Optional(Type.Boolean({ default: true })),
  },
  { additionalProperties: false, title: 'ComputerUseRunRequest' },
);

export const SessionIdParams = Type.Object({ session_id: Type.String({ pattern: '^[0-9A-HJKMNP-TV-Z]{26}$', description: 'The run\'s ULID' }) });
export const ScreenshotParams = Type.Object({ ...SessionIdParams.properties, turn: Type.Integer({ minimum: 0, maximum: 50 }) });

export const ScreenshotQuery = Type.Object(
  {
    page: StringEnum(CONSOLE_PAGES, { description: 'One of the ten console pages' }),
    base_url: Type.Optional({ ...Url, description: "The console's address; default its own origin (CONSOLE_URL)" }),
  },
  { additionalProperties: false },
);

export const ListRunsQuery = Type.Object(
  { status: Type.Optional(StringEnum(RUN_STATUSES)), cursor: Type.Optional(Cursor), limit: Type.Optional(PageLimit) },
  { additionalProperties: false },
);

const runFields = {
  session_id: Type.String(),
  model: Nullable(
    Type.Object(
      {
        name: Type.String({ description: 'The model name the run asked (COMPUTER_USE_MODEL when it was requested)' }),
        demonstration: Type.Boolean({ description: "True when it is Ward's demonstration model (`ward computer-use demo-model`), a script and not an AI" }),
      },
      { title: 'ComputerUseRunModel', description: 'The model that drives the run; null for runs stored before it was kept' },
    ),
  ),
  status: StringEnum(RUN_STATUSES),
  task: Type.String(),
  persona: StringEnum(PERSONAS),
  url: Type.String(),
  max_turns: Type.Integer(),
  headless: Type.Boolean(),
  requested_by: Nullable(Type.String({ description: 'The credential id that asked for the run' })),
  turns_taken: Type.Integer({ description: 'Model turns carried out so far' }),
  final_answer: Nullable(Type.String({ description: "The model's closing report (completed runs)" })),
  failure_reason: Nullable(Type.String()),
  created_at: Timestamp,
  started_at: Nullable(Timestamp),
  ended_at: Nullable(Timestamp),
};

export const RunSummarySchema = Type.Object(runFields, { title: 'ComputerUseRunSummary' });

export const AcceptedRunSchema = Type.Object({ session_id: Type.String(), status: StringEnum(RUN_STATUSES) }, { title: 'AcceptedComputerUseRun' });

const ActionSchema = Type.Object(
  {
    type: Type.String({ description: 'The tool action: screenshot, left_click, type, key, scroll, mouse_move, wait, …' }),
    screenshot_sha256: Sha256,
    error: Type.Optional(Type.String({ description: 'Why the action could not be carried out (the model was told)' })),
  },
  { additionalProperties: true },
);

export const RunSchema = Type.Object(
  {
    ...runFields,
    turns: Type.Array(
      Type.Object({
        turn: Type.Integer({ description: '0 is the page as the run opened it' }),
        actions: Type.Array(ActionSchema),
        model_text: Nullable(Type.String()),
        screenshot_sha256: Sha256,
        screenshot_url: Nullable(Type.String({ description: 'null when the PHI guard withheld the screenshot' })),
        created_at: Timestamp,
      }),
    ),
    ledger_entries: Type.Array(
      Type.Object({ leaf_index: Type.Integer(), leaf_hash: Type.String(), seq: Type.Integer(), type: Type.String() }),
      { description: 'The transparency-ledger leaves that record the run; prove each with /v1/transparency/proof/inclusion' },
    ),
  },
  { title: 'ComputerUseRun' },
);

export const RunListSchema = Type.Object({ runs: Type.Array(RunSummarySchema), next_cursor: Nullable(Type.String()) }, { title: 'ComputerUseRunList' });
