import { Controller, Get, Query } from '@nestjs/common';
import { OverlapsQueryDto } from './worktree-overlaps.dto';
import { OverlapReport, WorktreeOverlaps } from './worktree-overlaps.service';

@Controller('worktrees')
export class WorktreeOverlapsController {
  constructor(private readonly overlaps: WorktreeOverlaps) {}

  /** What the live worktree sessions of a repository on this node changed, and which would collide on merge. */
  @Get('overlaps')
  list(@Query() query: OverlapsQueryDto): Promise<OverlapReport> {
    return this.overlaps.overlaps(query.repo);
  }
}
