// Every service the routes call, built once from the app's dependencies (and only here). The crawl
// services exist only when Temporal does (both webhook settings set); a test may pass its own.
import type { AppDeps } from '../deps.ts';
import { createArchiveService, type ArchiveService } from './archives.ts';
import { createCrawlLevelService, type CrawlLevelService } from './crawl-levels.ts';
import { createCrawlService, type CrawlService } from './crawls.ts';
import { createDecisionService, type DecisionService } from './decisions.ts';
import { createMeService, type MeService } from './me.ts';

export interface AppServices {
  me: MeService;
  archives: ArchiveService;
  decisions: DecisionService;
  crawls?: CrawlService;
  levels?: CrawlLevelService;
}

export function createServices(deps: AppDeps): AppServices {
  const services: AppServices = { me: createMeService(deps), archives: createArchiveService(deps), decisions: createDecisionService(deps) };
  if (deps.temporal !== undefined) {
    services.crawls = deps.crawls ?? createCrawlService({ ...deps, temporal: deps.temporal });
    services.levels = deps.levels ?? createCrawlLevelService({ ...deps, temporal: deps.temporal });
  }
  return services;
}
