/**
 * The write path's statements, compiled once. Kysely builds an operation tree and compiles it to SQL
 * on every call; for the handful of statements every registration runs (the idempotency record, the
 * agent and its skill rows, the events) that was a quarter of the registry's CPU under write load
 * (docs/performance.md, "Registry: registration"). Here the query is built and compiled the first
 * time a statement of a given shape runs on a dialect; afterwards only the parameters are bound to
 * the same SQL text. The builder stays the one source of the SQL, so there is still one query layer
 * and one set of quoting rules.
 *
 * The caller passes the parameters itself, in the order the statement binds them. The first
 * compilation checks that order: if the builder's parameters are not exactly the caller's, the
 * statement is run as built and never cached, so a caller can make a statement slow by mistake but
 * never bind a value to the wrong column. The `shape` names everything that changes the SQL text
 * (the number of rows of a multi-row insert, which optional clauses are present).
 */
import { CompiledQuery, PostgresAdapter, type Compilable, type DialectAdapter, type Kysely, type QueryResult } from 'kysely';
import type { Database } from './schema.ts';

const texts = new WeakMap<DialectAdapter, Map<string, string>>();

export async function runCompiled<R>(
  db: Kysely<Database>,
  shape: string,
  parameters: readonly unknown[],
  build: () => Compilable<R>,
): Promise<QueryResult<R>> {
  // One SQL text per dialect: tests run SQLite and PostgreSQL in one process.
  const adapter = db.getExecutor().adapter;
  let byShape = texts.get(adapter);
  if (!byShape) {
    byShape = new Map();
    texts.set(adapter, byShape);
  }
  const text = byShape.get(shape);
  if (text !== undefined)
    return db.executeQuery(CompiledQuery.raw(text, [...parameters]) as CompiledQuery<R>);
  const compiled = build().compile();
  if (sameParameters(compiled.parameters, parameters)) byShape.set(shape, compiled.sql);
  return db.executeQuery(compiled);
}

function sameParameters(built: readonly unknown[], given: readonly unknown[]): boolean {
  return built.length === given.length && built.every((value, index) => Object.is(value, given[index]));
}

/**
 * A (multi-row) insert through {@link runCompiled}. Rows must have the same members in the same
 * order, none `undefined` (Kysely writes DEFAULT for those); other rows are inserted as built.
 */
export async function insertRows<T extends keyof Database & string>(db: Kysely<Database>, table: T, rows: readonly Record<string, unknown>[]): Promise<void> {
  if (rows.length === 0) return;
  const build = () => db.insertInto(table).values(rows as never);
  const bound = rowParameters(rows);
  if (!bound) return void (await build().execute());
  await runCompiled(db, `insert ${table} (${bound.shape})`, bound.parameters, build);
}

/**
 * The parameters of `rows` in the order an insert binds them, and the shape they give its SQL; none
 * when the rows differ in members or hold `undefined`.
 */
export function rowParameters(rows: readonly Record<string, unknown>[]): { shape: string; parameters: unknown[] } | undefined {
  const columns = Object.keys(rows[0] ?? {});
  const parameters: unknown[] = [];
  for (const row of rows) {
    const keys = Object.keys(row);
    if (keys.length !== columns.length || keys.some((key, index) => key !== columns[index])) return undefined;
    for (const column of columns) {
      const value = row[column];
      if (value === undefined) return undefined;
      parameters.push(value);
    }
  }
  return { shape: `${columns.join(',')} × ${rows.length}`, parameters };
}

/** Whether `db` speaks PostgreSQL (which can run an INSERT inside WITH; SQLite cannot). */
export function isPostgres(db: Kysely<Database>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** The shapes whose SQL text is kept for `db`'s dialect (for tests). */
export function compiledShapes(db: Kysely<Database>): string[] {
  return [...(texts.get(db.getExecutor().adapter)?.keys() ?? [])];
}
