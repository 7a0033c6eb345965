import { Body, Controller, Delete, Get, Header, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApplyResult, PreviewResult, ProfileApplier } from './apply/profile-applier';
import { LintResult } from './profile.lint';
import {
  ApplyProfileDto,
  CreateProfileDto,
  DuplicateProfileDto,
  ImportProfileDto,
  LintDraftDto,
  LintQueryDto,
  PreviewQueryDto,
  ProfileIdParam,
  ProjectBindingDto,
  UpdateProfileDto,
} from './profile.dto';
import { ImportResult, ProfileItem, ProfileList, ProfileView, ProjectBinding, SavedProfile } from './profile-views';
import { ProfilesService } from './profiles.service';

@Controller('agent-profiles')
export class ProfilesController {
  constructor(
    private readonly profiles: ProfilesService,
    private readonly applier: ProfileApplier,
  ) {}

  @Get()
  list(): Promise<ProfileList> {
    return this.profiles.list();
  }

  @Post()
  create(@Body() body: CreateProfileDto): Promise<SavedProfile> {
    return this.profiles.create({ ...body });
  }

  @Post('import')
  import(@Body() body: ImportProfileDto): Promise<ImportResult> {
    return this.profiles.importYaml(body.yaml);
  }

  @Post('lint')
  @HttpCode(200)
  lintDraft(@Body() body: LintDraftDto): LintResult {
    return this.profiles.lintDraft(body.document, body.scope);
  }

  @Get('project-binding')
  bindings(): Promise<{ bindings: ProjectBinding[] }> {
    return this.profiles.bindings();
  }

  @Post('project-binding')
  @HttpCode(200)
  bind(@Body() body: ProjectBindingDto): Promise<{ project_dir: string; profile_id: string | null }> {
    return this.profiles.bindProject(body.project_dir, body.profile_id);
  }

  @Get(':id')
  get(@Param() p: ProfileIdParam): Promise<ProfileItem> {
    return this.profiles.get(p.id);
  }

  @Patch(':id')
  update(@Param() p: ProfileIdParam, @Body() body: UpdateProfileDto): Promise<SavedProfile> {
    return this.profiles.update(p.id, { ...body });
  }

  @Delete(':id')
  @HttpCode(204)
  remove(@Param() p: ProfileIdParam): Promise<void> {
    return this.profiles.remove(p.id);
  }

  @Post(':id/duplicate')
  duplicate(@Param() p: ProfileIdParam, @Body() body: DuplicateProfileDto = {}): Promise<ProfileView> {
    return this.profiles.duplicate(p.id, body.name);
  }

  @Post(':id/set-default')
  @HttpCode(200)
  setDefault(@Param() p: ProfileIdParam): Promise<ProfileView> {
    return this.profiles.setDefault(p.id);
  }

  @Get(':id/lint')
  lint(@Param() p: ProfileIdParam, @Query() q: LintQueryDto): Promise<LintResult> {
    return this.profiles.lint(p.id, q.scope);
  }

  @Get(':id/export')
  @Header('content-type', 'application/yaml; charset=utf-8')
  export(@Param() p: ProfileIdParam): Promise<string> {
    return this.profiles.exportYaml(p.id);
  }

  @Post(':id/apply')
  @HttpCode(200)
  apply(@Param() p: ProfileIdParam, @Body() body: ApplyProfileDto = {}): Promise<ApplyResult> {
    return this.applier.apply(p.id, body);
  }

  @Get(':id/preview')
  preview(@Param() p: ProfileIdParam, @Query() q: PreviewQueryDto): Promise<PreviewResult> {
    return this.applier.preview(p.id, q);
  }
}
