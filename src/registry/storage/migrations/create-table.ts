import type { ColumnDefinitionBuilder, Kysely } from 'kysely';

/**
 * A column as a migration declares it, in SQL's words and this order: a type of the common subset
 * of SQLite and PostgreSQL, then any of `primary key`, `not null`, `unique`, and last a `default`
 * (digits, or a string in single quotes): `'text not null'`, `"text not null default '[]'"`.
 */
export type ColumnSpec = ColumnType | `${ColumnType} ${string}`;

type ColumnType = 'text' | 'integer' | 'bigint';

const COLUMN_SPEC = /^(text|integer|bigint)( primary key)?( not null)?( unique)?(?: default (?:(\d+)|'([^']*)'))?$/;

/** The type and the constraints of a column spec; a spec it does not know is a mistake in a migration. */
function columnOf(spec: ColumnSpec): { type: ColumnType; define: (column: ColumnDefinitionBuilder) => ColumnDefinitionBuilder } {
  const match = COLUMN_SPEC.exec(spec);
  if (!match) throw new Error(`not a column this helper knows: "${spec}"`);
  const [, type, primaryKey, notNull, unique, number, text] = match;
  return {
    type: type as ColumnType,
    define: (column) => {
      if (primaryKey) column = column.primaryKey();
      if (notNull) column = column.notNull();
      if (unique) column = column.unique();
      if (number !== undefined) column = column.defaultTo(Number(number));
      if (text !== undefined) column = column.defaultTo(text);
      return column;
    },
  };
}

/**
 * Creates `table` with `columns` in the order written and, when `primaryKey` names columns, the
 * composite primary key `<table>_pk`. The statement is the one Kysely's schema builder makes for the
 * same columns. Released migrations use this, so what it creates must never change:
 * test/core/migration-schema.test.ts compares their schema with a snapshot on both databases.
 */
export async function createTable<Column extends string>(
  db: Kysely<unknown>,
  table: string,
  columns: Record<Column, ColumnSpec>,
  options: { primaryKey?: NoInfer<Column>[] } = {},
): Promise<void> {
  let statement = db.schema.createTable(table);
  for (const [name, spec] of Object.entries<ColumnSpec>(columns)) {
    const { type, define } = columnOf(spec);
    statement = statement.addColumn(name, type, define);
  }
  // The builder knows no column names here (they are data, not types); `Column` checked them above.
  if (options.primaryKey) statement = statement.addPrimaryKeyConstraint(`${table}_pk`, options.primaryKey as never[]);
  await statement.execute();
}
