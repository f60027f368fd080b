// The core's error codes (wasm-core/src/errors.h), by name.
import { namedInMessage } from '../model/names';
export const CORE_ERRNO = {
  EINVAL: -1,
  ENOMEM: -2,
  EIO: -3,
  ECORRUPT: -4,
  ENOSPC: -5,
  ENOENT: -6,
  EEXIST: -7,
  ENOTSUP: -8,
  ETOOSMALL: -9,
  ENOTDIR: -10,
  EISDIR: -11,
  ENOTEMPTY: -12,
  ENAMETOOLONG: -13,
  EOVERFLOW: -14,
  EBUSY: -15,
  EPARSE: -16,
  EDEADLK: -17,
  EPERM: -18,
  EDQUOT: -19,
} as const;

export type CoreErrorName = keyof typeof CORE_ERRNO | 'EUNKNOWN';

export function errorName(code: number): CoreErrorName {
  for (const [name, value] of Object.entries(CORE_ERRNO)) if (value === code) return name as CoreErrorName;
  return 'EUNKNOWN';
}

/** A negative return code of the core, with the core's message (its trees named: model/names.ts's namedInMessage). */
export class CoreError extends Error {
  readonly code: number;
  readonly errname: CoreErrorName;
  constructor(code: number, message: string) {
    super(namedInMessage(message) || errorName(code));
    this.name = 'CoreError';
    this.code = code;
    this.errname = errorName(code);
  }
}
