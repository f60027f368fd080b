// The image's files, one directory at a time, and the core's check. Every
// listing is the core's (op ls, in the worker); the page only keeps the path
// it walked, refusing a name that cannot be a path component or a directory
// already on the path (a cycle) before asking the core anything.
import { useEffect, useState } from 'react';
import { CancelledError, type CoreClient } from '../core/client';
import type { DirEntry, Handle } from '../core/wasm';
import { enter, modeString, pathOf, visibleName, type PathStep } from '../model/files';

const FT_DIR = 2;
const MAX_ROWS = 500; // a hostile directory may hold millions: the page draws a bounded list

export function FilesPanel({ core, handle }: { core: CoreClient; handle: Handle }) {
  const [steps, setSteps] = useState<PathStep[]>([]);
  const [entries, setEntries] = useState<DirEntry[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [check, setCheck] = useState<{ errors: number; problems: string[] } | null>(null);
  const [checking, setChecking] = useState(false);

  useEffect(() => {
    let live = true;
    setEntries(null);
    core.call({ op: 'ls', handle, path: pathOf(steps) }).then(
      (e) => live && setEntries(e),
      (e: Error) => live && !(e instanceof CancelledError) && setError(e.message),
    );
    return () => {
      live = false;
    };
  }, [core, handle, steps]);

  const open = (e: DirEntry) => {
    const next = enter(steps, e.name, e.ino);
    if ('problem' in next) {
      setError(next.problem);
      return;
    }
    setError(null);
    setSteps(next.steps);
  };
  const up = (n: number) => {
    setError(null);
    setSteps(steps.slice(0, n));
  };
  const runCheck = () => {
    setChecking(true);
    setCheck(null);
    core.call({ op: 'check', handle }).then(
      (r) => setCheck(r),
      (e: Error) => !(e instanceof CancelledError) && setCheck({ errors: 1, problems: [e.message] }),
    ).finally(() => setChecking(false));
  };

  return (
    <section className="panel files" aria-labelledby="files-h">
      <h2 id="files-h">Files</h2>
      <nav aria-label="Path" className="crumbs">
        <button type="button" className="crumb" onClick={() => up(0)} disabled={!steps.length}>/</button>
        {steps.map((s, i) => (
          <span key={i}>
            <button type="button" className="crumb" onClick={() => up(i + 1)} disabled={i === steps.length - 1}>{visibleName(s.name)}</button>/
          </span>
        ))}
      </nav>
      {error && <p className="error" role="alert">{error}</p>}
      {entries && (
        <table className="listing" aria-label={`Directory ${pathOf(steps)}`}>
          <thead><tr><th>Mode</th><th>Links</th><th>Size</th><th>Inode</th><th>Name</th></tr></thead>
          <tbody>
            {entries.slice(0, MAX_ROWS).map((e, i) => (
              <tr key={i}>
                <td>{modeString(e.mode)}</td><td>{e.nlink}</td><td>{e.size.toString()}</td><td>{e.ino.toString()}</td>
                <td>{e.type === FT_DIR
                  ? <button type="button" className="linkish" onClick={() => open(e)}>{visibleName(e.name)}/</button>
                  : visibleName(e.name)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {entries && entries.length > MAX_ROWS && <p className="hint">and {entries.length - MAX_ROWS} more entries, not drawn.</p>}
      {entries && !entries.length && <p className="hint">An empty directory.</p>}
      <p>
        <button type="button" onClick={runCheck} disabled={checking}>Check the filesystem</button>
      </p>
      {check && (
        <div aria-label="Check result" role="region">
          {check.errors === 0 ? <p>No problems found.</p> : (
            <>
              <p className="error">{check.errors} {check.errors === 1 ? 'problem' : 'problems'} found:</p>
              <ul className="problems">{check.problems.map((p, i) => <li key={i}><code>{visibleName(p)}</code></li>)}</ul>
            </>
          )}
        </div>
      )}
    </section>
  );
}
