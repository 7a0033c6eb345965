import { join } from 'node:path';
import { packageRoot } from '../common/package-root';

export { packageRoot };

/** Where the build puts the page: dist/web of this package. */
export const defaultDashboardDir = (): string => join(packageRoot(), 'dist', 'web');
