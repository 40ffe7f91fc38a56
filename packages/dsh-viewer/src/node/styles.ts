/** The page's stylesheet, inlined into every page. */
export const STYLES = `
* { box-sizing: border-box; }
body { margin: 0; font: 13px/1.4 system-ui, sans-serif; color: #1d232b; background: #f6f7f9; }
.app { display: flex; flex-direction: column; height: 100vh; }
header { padding: 8px 12px; background: #1d232b; color: #e8ecf1; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
header .ok { color: #7bd88f; } header .bad, .bad { color: #ff8a80; } .repair-note { color: #ffd54f; }
main { flex: 1; display: grid; grid-template-columns: 30% 38% 32%; min-height: 0; }
section { min-height: 0; overflow: hidden; border-right: 1px solid #d5dae1; display: flex; flex-direction: column; }
.vlist { flex: 1; overflow-y: auto; position: relative; }
.vrow { position: absolute; left: 0; right: 0; }
button { font: inherit; color: inherit; background: none; border: 0; padding: 0; cursor: pointer; text-align: left; }
button.link { color: #1565c0; margin-left: 8px; } button.link:hover { text-decoration: underline; }
.tl { display: flex; align-items: center; gap: 6px; width: 100%; height: 100%; padding: 0 6px; white-space: nowrap; }
.tl .label { flex: 1; min-width: 0; overflow: hidden; text-overflow: ellipsis; }
.tl .track { flex: 0 0 30%; position: relative; height: 14px; background: #eceff3; border-radius: 2px; }
.tl .bar { position: absolute; top: 0; bottom: 0; min-width: 2px; background: #64b5f6; border-radius: 2px; }
.tl.turn { font-weight: 600; background: #e3e8ef; } .tl.step .label { padding-left: 10px; }
.tl.request { color: #0d47a1; } .tl.tool { color: #37474f; } .tl.request .label, .tl.tool .label { padding-left: 22px; }
.tl.request .bar { background: #9575cd; } .tl.tool .bar { background: #66bb6a; } .tl.turn .bar { background: #1e88e5; }
.tl.tool.error { color: #b71c1c; } .tl.request.break .label::before { content: '⚠ '; color: #e65100; }
.tl.selected { outline: 2px solid #1565c0; outline-offset: -2px; }
.tl.turn.error, .tl.turn.aborted, .tl.turn.interrupted { color: #b71c1c; }
.request-panel { overflow-y: auto; padding: 8px 12px; display: block; }
.request h2 { font-size: 15px; margin: 4px 0 8px; }
.diff { padding: 6px 8px; background: #e8f5e9; border-left: 4px solid #43a047; margin-bottom: 8px; }
.diff.break { background: #fff3e0; border-left-color: #e65100; }
.meta { color: #546e7a; margin-bottom: 8px; }
.message { border: 1px solid #d5dae1; border-radius: 4px; margin: 6px 0; background: #fff; }
.message.new { border-left: 4px solid #1565c0; } .message.kept { opacity: 0.8; }
.message-head { padding: 4px 8px; background: #f0f3f7; font-weight: 600; }
pre { margin: 0; padding: 6px 8px; white-space: pre-wrap; word-break: break-word; font: 12px/1.35 ui-monospace, monospace; }
.events { display: flex; flex-direction: column; height: 100%; }
.events .vlist { flex: 3; }
.filters { display: flex; gap: 4px; padding: 4px 6px; border-bottom: 1px solid #d5dae1; background: #f0f3f7; }
.filters button { padding: 1px 8px; border-radius: 10px; color: #37474f; } .filters button.on { background: #1565c0; color: #fff; }
.event { display: flex; gap: 8px; width: 100%; height: 100%; padding: 0 6px; white-space: nowrap; overflow: hidden; font: 12px/22px ui-monospace, monospace; }
.event .seq, .event .time, .event .type { flex-shrink: 0; }
.event .seq { width: 48px; text-align: right; color: #78909c; } .event .time { width: 72px; color: #90a4ae; }
.event .type { width: 150px; overflow: hidden; text-overflow: ellipsis; color: #37474f; } .event .summary { overflow: hidden; text-overflow: ellipsis; }
.event.inbox .type, .event.injected .type { color: #6a1b9a; } .event.repair { background: #fff8e1; }
.event.violation { background: #ffebee; color: #b71c1c; font-weight: 600; }
.event.selected { outline: 2px solid #1565c0; outline-offset: -2px; }
.detail { flex: 2; overflow-y: auto; border-top: 1px solid #d5dae1; background: #fff; }
.detail h3 { margin: 0; padding: 6px 8px; font-size: 13px; background: #f0f3f7; }
.violation-note { margin: 6px 8px; padding: 6px 8px; background: #ffebee; border-left: 4px solid #c62828; color: #b71c1c; }
.empty { padding: 16px; color: #78909c; }
`
