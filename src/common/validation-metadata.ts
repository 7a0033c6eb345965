import { getMetadataStorage } from 'class-validator';

type Storage = ReturnType<typeof getMetadataStorage>;
type Lookup = Storage['getTargetValidationMetadatas'];
type Metadata = ReturnType<Lookup>;
type Grouped = ReturnType<Storage['groupByPropertyName']>;

const memoized = new WeakSet<Storage>();

/**
 * class-validator looks a class's rules up again on every validation: it filters the class's own and tests every other
 * class that has rules with `instanceof` for inherited ones (about 90 DTO classes here), then groups them by property.
 * That was most of a request body's validation (about 11 of 13 µs for a signal). The rules of a class only change as
 * decorators run, so both are kept per class and options until a rule or a constraint is added, which drops them all.
 * Validation with groups (unused here) is looked up as before. The storage is process-wide (class-validator's global):
 * the global ValidationPipe and parseDto both read it.
 */
export function memoizeValidationMetadata(storage: Storage = getMetadataStorage()): void {
  if (memoized.has(storage)) return;
  memoized.add(storage);
  const lookup = storage.getTargetValidationMetadatas.bind(storage);
  const group = storage.groupByPropertyName.bind(storage);
  const found = new Map<Parameters<Lookup>[0], Map<string, Metadata>>();
  const grouped = new WeakMap<Metadata, Grouped>();
  const forget = <A extends unknown[]>(add: (...args: A) => void) => (...args: A): void => {
    found.clear();
    add(...args);
  };
  storage.addValidationMetadata = forget(storage.addValidationMetadata.bind(storage));
  storage.addConstraintMetadata = forget(storage.addConstraintMetadata.bind(storage));
  storage.addValidationSchema = forget(storage.addValidationSchema.bind(storage));
  storage.getTargetValidationMetadatas = (target, schema, always, strictGroups, groups) => {
    if (groups !== undefined && groups.length > 0) return lookup(target, schema, always, strictGroups, groups);
    const options = `${schema}\0${always}\0${strictGroups}`;
    let byOptions = found.get(target);
    if (byOptions === undefined) found.set(target, (byOptions = new Map()));
    let metadata = byOptions.get(options);
    if (metadata === undefined) byOptions.set(options, (metadata = lookup(target, schema, always, strictGroups, groups)));
    return metadata;
  };
  storage.groupByPropertyName = (metadata) => {
    let g = grouped.get(metadata);
    if (g === undefined) grouped.set(metadata, (g = group(metadata)));
    return g;
  };
}
