import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { WorkflowRun } from './workflow-run';
import { RunsQueryDto, StartRunDto } from './workflows.dto';
import { WorkflowsService } from './workflows.service';

@Controller('workflow-runs')
export class WorkflowsController {
  constructor(private readonly workflows: WorkflowsService) {}

  @Post()
  start(@Body() body: StartRunDto): Promise<WorkflowRun> {
    return this.workflows.startRun(body, 'rest');
  }

  @Get()
  list(@Query() query: RunsQueryDto): { runs: WorkflowRun[]; next_cursor: string | null } {
    return this.workflows.list(query);
  }

  @Get(':id')
  get(@Param('id') id: string): WorkflowRun {
    return this.workflows.get(id);
  }

  @Post(':id/converge')
  @HttpCode(200)
  converge(@Param('id') id: string): Promise<WorkflowRun> {
    return this.workflows.convergeRun(id);
  }
}
