export function kernelUnavailable(): string | null;
export function skipReason(): string | false;
export function withMount<T>(img: string, fn: (mnt: string) => T | Promise<T>, opts?: { readOnly?: boolean; options?: string[] }): Promise<T>;
export function btrfsCheck(img: string, extra?: string[]): { ok: boolean; output: string };
export function dumpTreeKeyLines(text: string): string[];
export function dumpTreeAll(text: string): string[];
export function progsDumpTree(img: string): string;
export function run(cmd: string, args: string[], opts?: object): string;
