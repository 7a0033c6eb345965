import { Body, Controller, Get, HttpCode, Post, Req } from '@nestjs/common';
import { FastifyRequest } from 'fastify';
import { Credentials } from './credentials';
import { RotateTokenDto } from './auth.dto';
import { Principal } from './principal';
import { AlsoAllowed } from './principals.guard';

@Controller('auth')
export class AuthController {
  constructor(private readonly credentials: Credentials) {}

  /** Who the presented credential makes the caller: lets a client check its token before it relies on it. */
  @Get('whoami')
  @AlsoAllowed('main_brain', 'worker', 'hook')
  whoami(@Req() request: FastifyRequest): { principal: Principal } {
    return { principal: request.principal as Principal };
  }

  /** A new user, brain or hook token, written to its file; the old one stops working at once. */
  @Post('rotate')
  @HttpCode(200)
  rotate(@Body() dto: RotateTokenDto): { principal: 'user' | 'main_brain' | 'hook'; token: string; path: string } {
    return { principal: dto.principal, ...this.credentials.rotate(dto.principal) };
  }
}
