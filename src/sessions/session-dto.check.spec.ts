import { plainToInstance } from 'class-transformer';
import { IsString, getMetadataStorage, validateSync } from 'class-validator';
import { CreateSessionDto, ListSessionsQueryDto, MergeDto, MessageDto, PermissionDto, RemoveWorktreeDto, SIGNALS, StopDto, SupervisionDto } from './session.dto';
import { dtoCheck } from '../common/dto-check';
import { parseDto } from '../common/validation-errors';

type Dto = new () => object;
const OPTIONS = { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: false };
const byClassValidator = (type: Dto, input: object) => validateSync(plainToInstance(type, input), OPTIONS).length === 0;

/** A small deterministic generator, so a failure names an input that can be replayed. */
function prng(seed: number): () => number {
  let s = seed;
  return () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
}

/** Inputs over a class's own fields: the values its rules name (IsIn), and values of every other kind. */
function inputs(type: Dto, count: number): object[] {
  const metadata = getMetadataStorage().getTargetValidationMetadatas(type, '', false, false, undefined);
  const fields = [...new Set(metadata.map((m) => m.propertyName))];
  const named = metadata.flatMap((m) => (m.name === 'isIn' ? (m.constraints[0] as unknown[]) : []));
  const pool: unknown[] = [...named, ...named, ...named, 'x', 'x', { a: 1 }, null, '', 'x', 'a\0b', 'x'.repeat(70_000), 0, 1, -1, 1.5, 600_001, true, false, {}, { a: 1 }, [], ['a']];
  const random = prng(fields.length * 7919 + type.name.length);
  return Array.from({ length: count }, () => {
    const input: Record<string, unknown> = {};
    for (const f of fields) if (random() < 0.85) input[f] = pool[Math.floor(random() * pool.length)];
    if (random() < 0.1) input.extra = 'x';
    return input;
  });
}

describe('a DTO class checked by one function', () => {
  const plain: Array<[string, Dto]> = [
    ...Object.entries(SIGNALS).map(([name, type]): [string, Dto] => [name, type]),
    ['MessageDto', MessageDto],
    ['PermissionDto', PermissionDto],
    ['StopDto', StopDto],
    ['SupervisionDto', SupervisionDto],
    ['MergeDto', MergeDto],
    ['RemoveWorktreeDto', RemoveWorktreeDto],
  ];

  it.each(plain)('given %s and 2,000 inputs valid and not, when checked, then the check answers valid exactly when class-validator finds nothing wrong', (_name, type) => {
    const check = dtoCheck(type);
    expect(check).not.toBeNull();
    let valid = 0;
    for (const input of inputs(type, 2000)) {
      const expected = byClassValidator(type, input);
      expect([input, (check as (dto: object) => boolean)(Object.assign(new type(), input))]).toEqual([input, expected]);
      if (expected) valid++;
    }
    expect(valid).toBeGreaterThan(5);
  });

  it('given classes whose fields class-transformer converts or that nest DTOs, then they have no such check', () => {
    expect(dtoCheck(CreateSessionDto)).toBeNull();
    expect(dtoCheck(ListSessionsQueryDto)).toBeNull();
    class Each {
      @IsString({ each: true }) names!: string[];
    }
    expect(dtoCheck(Each)).toBeNull();
  });

  it('given a valid signal and an invalid one, when parsed, then the first is an instance of its DTO with its fields and the second is refused naming the field', () => {
    const dto = parseDto(SIGNALS.report_progress, { type: 'report_progress', status: 'completed', message: 'done' });
    expect(dto).toBeInstanceOf(SIGNALS.report_progress);
    expect({ ...dto }).toEqual({ ...plainToInstance(SIGNALS.report_progress, { type: 'report_progress', status: 'completed', message: 'done' }) });
    expect(() => parseDto(SIGNALS.report_progress, { type: 'report_progress', status: 'finished' })).toThrow(/^status: must be one of the following values/);
    expect(() => parseDto(SIGNALS.report_progress, { type: 'report_progress', status: 'completed', mood: 'good' })).toThrow('mood: unknown field');
  });
});
