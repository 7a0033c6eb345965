import { IsInt, IsOptional, Max, Min } from 'class-validator';

/**
 * When this profile's workers count as going round in circles (docs/guide/loops.md): each field overrides the service's
 * BRAINSTEM_LOOP_* value for the profile's sessions; 0 turns a pattern (or escalate_after, the hold) off.
 */
export class LoopsConfig {
  @IsOptional() @IsInt() @Min(0) @Max(10_000)
  repeated_call?: number;

  @IsOptional() @IsInt() @Min(0) @Max(10_000)
  alternation?: number;

  @IsOptional() @IsInt() @Min(0) @Max(10_000)
  repeated_failure?: number;

  @IsOptional() @IsInt() @Min(0) @Max(10_000)
  repeated_text?: number;

  @IsOptional() @IsInt() @Min(0) @Max(2_147_483_647)
  no_progress_s?: number;

  @IsOptional() @IsInt() @Min(0) @Max(2_147_483_647)
  cooldown_s?: number;

  @IsOptional() @IsInt() @Min(0) @Max(1000)
  escalate_after?: number;
}
