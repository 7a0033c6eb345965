import { JsonObject } from './types';

/** A permission request's input as a person reads it: the command, or the file and what goes into it; else the JSON. */
export type ReadableInput =
  | { kind: 'command'; command: string; description: string | null }
  | { kind: 'file'; path: string; content: string | null; replaces: string | null }
  | { kind: 'json'; json: string };

const text = (input: JsonObject, ...keys: string[]): string | null => {
  for (const key of keys) {
    const value = input[key];
    if (typeof value === 'string') return value;
  }
  return null;
};

export function readableInput(input: JsonObject): ReadableInput {
  const command = text(input, 'command', 'cmd');
  if (command !== null) return { kind: 'command', command, description: text(input, 'description') };
  const path = text(input, 'file_path', 'path', 'notebook_path');
  if (path !== null) return { kind: 'file', path, content: text(input, 'content', 'new_string', 'new_source'), replaces: text(input, 'old_string') };
  return { kind: 'json', json: JSON.stringify(input, null, 2) };
}
