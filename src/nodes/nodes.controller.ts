import { Controller, Get } from '@nestjs/common';
import { ClusterView } from './cluster-view';
import { NodesService } from './nodes.service';

@Controller('cluster')
export class NodesController {
  constructor(private readonly nodes: NodesService) {}

  /** The user's: the nodes, the supervisor lease, each node's sessions and lag. */
  @Get()
  view(): Promise<ClusterView> {
    return this.nodes.view();
  }
}
