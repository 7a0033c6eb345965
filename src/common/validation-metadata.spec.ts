import { IsIn, IsString, MaxLength, MetadataStorage, getMetadataStorage, validateSync } from 'class-validator';
import { memoizeValidationMetadata } from './validation-metadata';

class Base {
  @IsString() name!: string;
}
class Derived extends Base {
  @IsIn(['a', 'b']) kind!: string;
}

const lookup = (storage: MetadataStorage, target: new () => object) => storage.getTargetValidationMetadatas(target, '', false, false, undefined);

describe('class-validator rules looked up once per class', () => {
  it('given a class with inherited rules, when its rules are looked up twice, then both answers are what class-validator finds, the second the same one kept', () => {
    const plain = new MetadataStorage();
    const kept = new MetadataStorage();
    for (const m of getMetadataStorage().getTargetValidationMetadatas(Derived, '', false, false, undefined)) {
      plain.addValidationMetadata(m);
      kept.addValidationMetadata(m);
    }
    memoizeValidationMetadata(kept);
    const first = lookup(kept, Derived);
    expect(first).toEqual(lookup(plain, Derived));
    expect(first.map((m) => m.propertyName).sort()).toEqual(['kind', 'name']);
    expect(lookup(kept, Derived)).toBe(first);
    expect(kept.groupByPropertyName(first)).toBe(kept.groupByPropertyName(first));
  });

  it('given the rules of a class kept, when a rule is added to it afterwards, then validation applies it', () => {
    class Late {
      @IsString() title!: string;
    }
    memoizeValidationMetadata();
    const long = Object.assign(new Late(), { title: 'x'.repeat(20) });
    expect(validateSync(long)).toEqual([]);
    MaxLength(10)(Late.prototype, 'title');
    expect(validateSync(long).map((e) => e.property)).toEqual(['title']);
  });

  it('given validation by groups, when looked up, then it is answered afresh each time', () => {
    const storage = new MetadataStorage();
    for (const m of getMetadataStorage().getTargetValidationMetadatas(Derived, '', false, false, undefined)) storage.addValidationMetadata(m);
    memoizeValidationMetadata(storage);
    const grouped = (s: MetadataStorage) => s.getTargetValidationMetadatas(Derived, '', false, false, ['g']);
    expect(grouped(storage)).not.toBe(grouped(storage));
  });
});
