import { IsOptional, Matches } from 'class-validator';
import { Describe } from '../common/dto-schema';
import { PathField } from '../common/path-field';

const REPO = "The absolute path of the repository's main checkout (the cwd its worktree sessions were started from).";

/** The main checkout of a repository, named by its absolute path: only ever matched against sessions', never run in. */
const RepoPath = (): PropertyDecorator => (target, key) => {
  PathField()(target, key);
  Matches(/^\//, { message: '$property: must be an absolute path' })(target, key);
  Describe(REPO)(target, key);
};

export class OverlapsQueryDto {
  @RepoPath() repo!: string;
}

/** The brain's overlaps and suggest_merge_order: one repository, or every one with live worktree sessions. */
export class OverlapsArgs {
  @IsOptional() @RepoPath() repo?: string;
}
