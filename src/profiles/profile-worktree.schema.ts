import { ArrayMaxSize, IsArray, IsNotEmpty, IsOptional, IsString, Matches, MaxLength, ValidateBy, ValidationOptions } from 'class-validator';
import { relativePathProblem } from '../common/relative-path';

const NO_NUL = /^[^\0]*$/;

/** Paths inside a repository (untracked files to copy into a worktree): relative, never leading out of it. */
function IsTreePaths(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isTreePaths',
      validator: {
        validate: (v: unknown) => Array.isArray(v) && v.every((p) => typeof p === 'string' && relativePathProblem(p) === null),
        defaultMessage: (args) => {
          const bad = Array.isArray(args?.value) ? args.value.find((p: unknown) => typeof p !== 'string' || relativePathProblem(p) !== null) : undefined;
          return typeof bad === 'string' ? `$property: ${JSON.stringify(bad)} ${relativePathProblem(bad)}` : '$property must be a list of paths inside the repository';
        },
      },
    },
    options,
  );
}

/** How a session's git worktree is made ready before its worker starts (with isolation `worktree`). */
export class WorktreeConfig {
  /** A shell command run in the worktree with the worker's environment (`npm ci`); its failure fails the session. */
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(4096) @Matches(NO_NUL, { message: '$property must not contain NUL' })
  setup?: string;

  /** Untracked files of the checkout (`.env`) copied into the worktree, relative to the repository's top folder. */
  @IsOptional() @IsArray() @ArrayMaxSize(100) @IsTreePaths()
  copy?: string[];
}
