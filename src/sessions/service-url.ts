import { Inject, Injectable } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { AddressInfo } from 'node:net';
import { CONFIG } from '../config/config.module';
import { BrainstemConfig } from '../config/config.schema';

/**
 * The URL workers report back to (BRAINSTEM_URL). Read from the listening socket when there is one,
 * so BRAINSTEM_PORT=0 yields the real port; before listening, from the configured host and port.
 */
@Injectable()
export class ServiceUrl {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    @Inject(CONFIG) private readonly config: BrainstemConfig,
  ) {}

  get(): string {
    const address = this.adapterHost.httpAdapter?.getHttpServer()?.address() as AddressInfo | string | null | undefined;
    const port = typeof address === 'object' && address ? address.port : this.config.server.port;
    const host = this.config.server.host.includes(':') ? `[${this.config.server.host}]` : this.config.server.host;
    return `http://${host}:${port}`;
  }
}
