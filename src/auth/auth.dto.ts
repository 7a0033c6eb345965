import { IsIn } from 'class-validator';

export class RotateTokenDto {
  @IsIn(['user', 'main_brain', 'hook'])
  principal!: 'user' | 'main_brain' | 'hook';
}
