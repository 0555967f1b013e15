/**
 * Errors of the embedded database across a thread or process boundary: structured clone (and a child process's
 * channel) keeps an Error's message and name but drops a DatabaseError's fields (`code`, `constraint`, …), which
 * callers read (a unique violation is `23505`; a data folder's file error maps to a DataDirError by its `code`).
 */

/** An error as plain data. */
export interface SerializedError {
  name: string;
  message: string;
  stack?: string;
  fields: Record<string, string | number | boolean>;
}

export function serializeError(error: unknown): SerializedError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error), fields: {} };
  const fields: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(error)) {
    if (key === 'params' || key === 'queryOptions') continue;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      fields[key] = value;
  }
  return {
    name: error.name,
    message: error.message,
    ...(error.stack === undefined ? {} : { stack: error.stack }),
    fields,
  };
}

/** A serialized error as an Error again, with the fields it carried. */
export function errorOf(serialized: SerializedError): Error {
  const error = new Error(serialized.message);
  error.name = serialized.name;
  if (serialized.stack !== undefined) error.stack = serialized.stack;
  Object.assign(error, serialized.fields);
  return error;
}
