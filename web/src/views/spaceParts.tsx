// The space panel's parts (lesson 5), each a plain function of a frame of the
// space story (model/space.ts): a gauge per space_info, the ticket queues,
// the reclaim workers' ladders of flush states, and the last delalloc flush
// with each inode's dirty pages draining. Every figure is also written out.
import type { Gauge, Ladder, QueuedTicket, ShrinkPass, SpaceName } from '../model/space';
import { FLUSH_STATE_DOES, PAGE } from '../model/space';
import { formatNs } from '../model/units';
import { budgetText, formatSize, passText, ticketSize } from './space.sentences';

type NameOf = (task: number) => string;

const PARTS = [
  ['used', 'used'], ['reserved', 'reserved'], ['pinned', 'pinned'], ['mayUse', 'may_use'], ['free', 'free'],
] as const;

/** The gauges' words: "used 1.2 MiB, reserved 0 bytes, …". */
export function gaugeText(g: Gauge): string {
  const parts = PARTS.map(([k, label]) => `${label} ${formatSize(g[k])}`).join(', ');
  return `${g.space}: ${formatSize(g.total)} of chunks; ${parts}${g.over ? `; reservations ${formatSize(g.over)} past the chunks (overcommitted)` : ''}`;
}

export function SpaceGauges({ gauges, missing }: { gauges: Gauge[]; missing: SpaceName[] }) {
  return (
    <div className="space-gauges">
      {gauges.map((g) => {
        const scale = Math.max(1, g.total, g.total + g.over);
        const pct = (v: number) => `${((100 * v) / scale).toFixed(2)}%`;
        return (
          <figure key={g.space} className="space-gauge" data-space={g.space} data-over={g.over > 0}>
            <figcaption><strong>{g.space}</strong> <span className="hint">{formatSize(g.total)} of chunks</span></figcaption>
            <div className="gauge-bar" role="img" aria-label={gaugeText(g)}>
              {PARTS.map(([k]) => (g[k] > 0 ? <span key={k} className={`seg seg-${k}`} style={{ width: pct(g[k]) }} /> : null))}
              {g.over > 0 && <span className="gauge-total" style={{ left: pct(g.total) }} title="the chunks end here" />}
            </div>
            <p className="gauge-said" data-testid={`gauge-${g.space}`}>
              {PARTS.map(([k, label]) => <span key={k} className={`said-${k}`}><i className={`swatch seg-${k}`} />{label} {formatSize(g[k])}</span>)}
              {g.over > 0 && <span className="said-over">reservations go {formatSize(g.over)} past the chunks: overcommitted</span>}
            </p>
          </figure>
        );
      })}
      {missing.length > 0 && (
        <p className="hint">Not reported yet: {missing.join(', ')} (the core reports a space_info's counters when a ticket is made or granted and when a chunk is added).</p>
      )}
    </div>
  );
}

export function TicketQueues({ queues, name, any }: { queues: { space: SpaceName; tickets: QueuedTicket[] }[]; name: NameOf; any: boolean }) {
  if (!queues.length) return <p className="ticket-queue empty" data-testid="ticket-queue">{any ? 'No ticket waits at this moment.' : 'No ticket so far in this step: every reservation fitted.'}</p>;
  return (
    <div data-testid="ticket-queue">
      {queues.map((q) => (
        <div key={q.space} className="ticket-queue">
          <span className="hint">{q.space} tickets, first come first served:</span>
          <ol aria-label={`${q.space} tickets waiting`}>
            {q.tickets.map((t, i) => (
              <li key={`${t.task}-${t.since}`} className="ticket" data-task={name(t.task)}>
                <strong>{i + 1}. {name(t.task)}</strong> asks {ticketSize(t.bytes)}, waiting {formatNs(t.waited)}
              </li>
            ))}
          </ol>
        </div>
      ))}
    </div>
  );
}

export function FlushLadders({ ladders }: { ladders: Ladder[] }) {
  if (!ladders.length) return <p className="hint">No reclaim worker runs in this step.</p>;
  return (
    <div className="flush-ladders">
      {ladders.map((l) => (
        <div key={l.space} className="flush-ladder-box">
          <p className="hint">
            The {l.space} reclaim worker{l.walking ? ', walking' : ', idle'}{l.toReclaim !== null ? `; its last state was asked to reclaim ${formatSize(l.toReclaim)}` : ''}:
          </p>
          <ol className="flush-ladder" aria-label={`The ${l.space} reclaim worker's flush states`}>
            {l.rungs.map((r) => (
              <li key={r.state} data-state={r.state} data-lit={r.lit} data-current={r.current} className={`rung${r.lit ? ' lit' : ''}${r.current ? ' current' : ''}${r.runs ? '' : ' never'}`}
                data-running={r.running} aria-current={r.current ? 'step' : undefined}>
                <span className="rung-name">{r.state}</span>
                <span className="rung-does">{FLUSH_STATE_DOES[r.state] ?? ''}</span>
                <span className="rung-runs">{r.runs ? `ran ${r.runs.toLocaleString('en')}×` : r.running ? 'its first run' : 'not run'}</span>
                {r.current && <span className="rung-now">{r.running ? '← running: a delalloc flush' : `← last run${r.granted ? `: granted ${r.granted} ticket${r.granted === 1 ? '' : 's'}` : ', no ticket granted'}`}</span>}
              </li>
            ))}
          </ol>
        </div>
      ))}
    </div>
  );
}

const SHOWN_FILES = 24;

/** A delalloc flush: its budget, and each inode it wrote as a bar of its dirty pages, the written part growing over them (draining). */
export function DelallocFlush({ pass, at, fresh }: { pass: ShrinkPass | null; at: number | null; fresh: boolean }) {
  if (!pass) return <p className="hint" data-testid="delalloc-flush">No delalloc flush yet in this step.</p>;
  const files = pass.files.slice(0, SHOWN_FILES);
  const rest = pass.files.slice(SHOWN_FILES);
  const widest = Math.max(1, ...files.map((f) => f.dirtyBefore));
  const allBefore = Math.max(1, pass.before.pages);
  return (
    <div className={`delalloc-flush${fresh ? ' fresh' : ''}`} data-testid="delalloc-flush" data-mode={pass.mode}>
      <p>
        <strong>{fresh ? 'This' : 'The last'} delalloc flush</strong>{at !== null ? ` (at ${formatNs(at)}` : ''}{pass.state ? `, ${pass.state}` : ''}{at !== null ? ')' : ''}:
        {' '}budget {budgetText(pass)}; it {passText(pass)}.
      </p>
      <div className="drain-all">
        <span className="drain-label">all delalloc</span>
        <span className="drain-bar" role="img" aria-label={`All delalloc: ${pass.before.pages} dirty pages of ${pass.before.inodes} inodes before the pass, ${pass.left.pages} of ${pass.left.inodes} after`}>
          <span className="written" style={{ width: `${(100 * (pass.before.pages - pass.left.pages)) / allBefore}%` }} />
          <span className="dirty" />
        </span>
        <span className="drain-said">{pass.before.pages - pass.left.pages} of {pass.before.pages} pages written</span>
      </div>
      <ul className="drain-files" aria-label="Each inode the flush wrote: its dirty pages before, and how many it wrote">
        {files.map((f) => (
          <li key={f.ino} data-ino={f.ino}>
            <span className="drain-label">inode {f.ino}</span>
            <span className="drain-bar" style={{ width: `${Math.max(4, (100 * f.dirtyBefore) / widest)}%` }}>
              <span className="written" style={{ width: `${(100 * f.written) / Math.max(1, f.dirtyBefore)}%` }} />
              <span className="dirty" />
            </span>
            <span className="drain-said">{f.written} of {f.dirtyBefore} page{f.dirtyBefore === 1 ? '' : 's'}{f.inline ? ', inline' : ''}</span>
          </li>
        ))}
      </ul>
      {rest.length > 0 && <p className="hint">and {rest.length} more inodes ({rest.reduce((n, f) => n + f.written, 0)} pages, {formatSize(rest.reduce((n, f) => n + f.written, 0) * PAGE)}).</p>}
      <p className="legend"><span><i className="d-written" />written back (an ordered extent, or inline)</span><span><i className="d-dirty" />still dirty (delalloc)</span></p>
    </div>
  );
}
