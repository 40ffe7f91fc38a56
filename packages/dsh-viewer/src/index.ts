export { inboxEvents, injectedMessages, repairClosers, violations } from './data/annotations.ts'
export { buildViewData } from './data/build.ts'
export { compactionViews } from './data/compactions.ts'
export { requestMessages, requestSources, resolveMessage } from './data/messages.ts'
export { diffRequests } from './data/request-diff.ts'
export { requestViews } from './data/requests.ts'
export { timeline } from './data/timeline.ts'
export type {
  CompactionView,
  EventMark,
  MessageSource,
  RequestDiff,
  RequestView,
  StepView,
  ToolView,
  TurnView,
  ViewData,
  ViolationView,
} from './data/types.ts'
export { loadAppBundle } from './node/bundle.ts'
export { renderPage } from './node/page.ts'
export { readViewData } from './node/read.ts'
export { serveViewer, type ViewerServer } from './node/server.ts'
