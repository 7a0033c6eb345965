import { IsNotEmpty, IsString, Matches, MaxLength } from 'class-validator';

/** The longest path a request may name (Linux's PATH_MAX). */
export const MAX_PATH_LENGTH = 4096;

/** A file-system path (a directory, a command): a non-empty string of at most MAX_PATH_LENGTH characters and no NUL. */
export const PathField = (): PropertyDecorator => (target, key) => {
  IsString()(target, key);
  IsNotEmpty()(target, key);
  MaxLength(MAX_PATH_LENGTH)(target, key);
  Matches(/^[^\0]*$/, { message: '$property: must not contain NUL' })(target, key);
};
